using System.Reflection;
using BlockDb.Drivers;
using BlockDb.Layouts;

namespace BlockDb.Opening;

/// <summary>
/// The settings a database on a caller's connection refuses (<see cref="BlockDatabaseBuilder.UseCallerConnection"/>):
/// what names another provider or another file, and every setting that only BlockDb's own connections and transactions
/// use (pragmas, batching, group commit), named by key. A setting is applied or refused, never ignored.
/// </summary>
internal static class CallerOptions
{
    private const string Leave = "does not apply inside the caller's transaction: the caller owns the connection, its pragmas and its commits; leave it unset";

    /// <summary>Checks <paramref name="options"/> (frozen, validated) against the caller's connection; returns the file's full path.</summary>
    /// <exception cref="BlockDbConfigurationException">A setting is refused, the connection is closed, or it is not on a file.</exception>
    public static string Validate(BlockDbOptions options, ILentSqliteConnection connection)
    {
        var provider = connection.Driver.Name;
        if (options.Provider is { } named && !string.Equals(named.Trim(), provider, StringComparison.OrdinalIgnoreCase))
        {
            throw new BlockDbConfigurationException(
                $"{BlockDbOptions.SectionName}:Provider",
                $"BlockDb:Provider is {Quoted.Value(named)}, but the caller's connection is a {provider} connection; leave Provider unset or set it to {provider}.");
        }

        if (options.ConnectionString is not null)
        {
            throw new BlockDbConfigurationException($"{BlockDbOptions.SectionName}:ConnectionString", $"BlockDb:ConnectionString {Leave}.");
        }

        if (!connection.IsOpen)
        {
            throw new BlockDbConfigurationException(
                "connection",
                "The caller's connection is closed; BlockDb runs on it only while it is open (open it, lend it, and close it only after disposing BlockDb).");
        }

        var file = connection.FileName;
        if (string.IsNullOrEmpty(file))
        {
            throw new BlockDbConfigurationException(
                $"{BlockDbOptions.SectionName}:DataSource",
                "The caller's connection is on an in-memory or temporary database; BlockDb indexes live in files. Open the connection on the database file.");
        }

        if (options.DataSource is { } dataSource && !string.IsNullOrWhiteSpace(dataSource) && FileKey.Of(dataSource) != FileKey.Of(file))
        {
            throw new BlockDbConfigurationException(
                $"{BlockDbOptions.SectionName}:DataSource",
                $"BlockDb:DataSource is {Quoted.Path(dataSource)}, but the caller's connection is on {Quoted.Path(file)}; leave DataSource unset or name the same file.");
        }

        RefuseChanged(options.Pragmas, new PragmaOptions(), "Pragmas");
        RefuseChanged(options.Batching, new BatchingOptions(), "Batching");
        RefuseChanged(options.GroupCommit, new GroupCommitOptions(), "GroupCommit");
        if (options.Index.Layout is { } layout)
        {
            RequireLayout(layout);
            LayoutCatalog.Of(layout).Validate(options);
        }

        return Path.GetFullPath(file);
    }

    /// <summary>Refuses a layout that cannot run inside a caller's transaction.</summary>
    /// <exception cref="BlockDbConfigurationException">The layout is KeyMap.</exception>
    public static void RequireLayout(BlockLayout layout)
    {
        if (layout == BlockLayout.KeyMap)
        {
            throw new BlockDbConfigurationException(
                $"{BlockDbOptions.SectionName}:Index:Layout",
                "The KeyMap layout (BlockDb:Index:Layout, or the file's own) cannot run inside the caller's transaction: its key map takes in new blocks only after a COMMIT it sees (M3), and the caller commits. Use a TextHash or BlobHash file, or open the KeyMap file with BlockDb on its own connection.");
        }
    }

    /// <summary>Refuses the first property of <paramref name="options"/> that differs from its default, by key.</summary>
    private static void RefuseChanged<T>(T options, T defaults, string section)
        where T : class
    {
        foreach (var property in typeof(T).GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            if (property.CanWrite && !Equals(property.GetValue(options), property.GetValue(defaults)))
            {
                var key = $"{BlockDbOptions.SectionName}:{section}:{property.Name}";
                throw new BlockDbConfigurationException(key, $"{key} = {property.GetValue(options) ?? "null"} {Leave}.");
            }
        }
    }
}
