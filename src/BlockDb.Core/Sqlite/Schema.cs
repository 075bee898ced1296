using System.Globalization;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Sql;
using Microsoft.Extensions.Logging;

namespace BlockDb.Sqlite;

/// <summary>
/// Checks that a file is a BlockDb index this build can use, or a file of a layout BlockDb works on in place (a Duplicati
/// database, <see cref="LayoutDefinition.Recognizes"/>), and returns its layout; creates the schema in a new
/// file and lets the layout upgrade or repair what it needs (<see cref="LayoutDefinition.Inspect"/>). The check runs in
/// a read transaction, so opening an existing file never waits for a writer; only creating or changing the schema
/// takes the write lock (and then checks again under it, so two processes cannot both create or upgrade).
/// </summary>
internal static class Schema
{
    /// <summary>Opens the schema of <paramref name="path"/>.</summary>
    /// <param name="connection">A connection to the file.</param>
    /// <param name="path">The file, for messages.</param>
    /// <param name="requested">The configured layout, or null for the file's own (a new file gets the default).</param>
    /// <param name="readOnly">Whether the schema may be written.</param>
    /// <param name="accept">Refuses settings the found layout cannot honour, before anything is written.</param>
    /// <param name="logger">Where upgrades and repairs are logged.</param>
    /// <returns>The file's layout.</returns>
    public static LayoutDefinition Open(ISqliteConnection connection, string path, BlockLayout? requested, bool readOnly, Action<LayoutDefinition> accept, ILogger logger)
    {
        var (layout, change) = Transactions.Run(connection, BlockDbSql.BeginRead, () => Inspect(connection, path, requested));
        accept(layout);
        if (change == SchemaChange.None)
        {
            return layout;
        }

        if (readOnly)
        {
            throw new BlockDbFormatException(change == SchemaChange.Create
                ? $"{Quoted.Path(path)} is empty, and BlockDb:ReadOnly = true cannot create an index; open it once without ReadOnly."
                : $"{Quoted.Path(path)} is a {layout.Layout} index that needs a one-time schema change to version {layout.SchemaVersion} ({change}), which BlockDb:ReadOnly = true cannot make; open it once without ReadOnly.");
        }

        (layout, change) = Transactions.Run(connection, BlockDbSql.Begin.Text, () =>
        {
            var found = Inspect(connection, path, requested);
            if (found.Change == SchemaChange.Create)
            {
                Create(connection, found.Layout);
            }
            else if (found.Change != SchemaChange.None)
            {
                found.Layout.Apply(connection, found.Change);
                connection.Execute(VersionPragma(found.Layout.SchemaVersion));
            }

            return found;
        });

        switch (change)
        {
            case SchemaChange.Upgrade:
                Log.SchemaUpgraded(logger, path, layout.Layout, layout.SchemaVersion);
                break;
            case SchemaChange.RestoreGuards:
                Log.GuardsRestored(logger, path, layout.Layout);
                break;
        }

        return layout;
    }

    /// <summary>
    /// Opens the schema of <paramref name="path"/> on a caller's connection, inside the caller's open transaction [X1]:
    /// the same check, but nothing is ever written. A file that needs its schema created or changed is refused.
    /// </summary>
    /// <exception cref="BlockDbFormatException">The file is not a BlockDb index this build can use as it is.</exception>
    public static LayoutDefinition OpenInCallerTransaction(ISqliteConnection connection, string path, BlockLayout? requested, Action<LayoutDefinition> accept)
    {
        var (layout, change) = Inspect(connection, path, requested);
        if (change == SchemaChange.Create)
        {
            throw new BlockDbFormatException(
                $"{Quoted.Path(path)} is empty, and BlockDb does not create an index inside the caller's transaction; create it once with BlockDb on its own connection (without UseCallerConnection), then lend the caller's connection. Nothing was written.");
        }

        accept(layout);
        return change switch
        {
            SchemaChange.None => layout,
            _ => throw new BlockDbFormatException(
                $"{Quoted.Path(path)} is a {layout.Layout} index that needs a one-time schema change to version {layout.SchemaVersion} ({change}), which BlockDb does not make inside the caller's transaction; open it once with BlockDb on its own connection first. Nothing was written."),
        };
    }

    /// <summary>What the file is and what it needs; throws for files BlockDb must not touch.</summary>
    private static (LayoutDefinition Layout, SchemaChange Change) Inspect(ISqliteConnection connection, string path, BlockLayout? requested)
    {
        // The schema read first starts the snapshot the two header reads then share.
        var objects = ReadInt(connection, "SELECT COUNT(*) FROM sqlite_schema");
        var applicationId = ReadInt(connection, "PRAGMA application_id");
        var version = ReadInt(connection, "PRAGMA user_version");
        if (applicationId == 0 && version == 0 && objects == 0)
        {
            var created = requested is { } wantedNew ? LayoutCatalog.Of(wantedNew) : LayoutCatalog.Default;
            return created.CreateRefused is { } refused
                ? throw new BlockDbFormatException($"{Quoted.Path(path)} is empty and BlockDb:Index:Layout is {created.Layout}: {refused}. Nothing was written.")
                : (created, SchemaChange.Create);
        }

        // A file another application made in a layout BlockDb works on in place (a Duplicati database): recognised by its
        // own rule and shape, never by a header BlockDb would have to write.
        if (applicationId == 0 && version == 0 && LayoutCatalog.All.FirstOrDefault(l => l.Recognizes(connection, path)) is { } recognised)
        {
            return (Requested(recognised, requested, path), SchemaChange.None);
        }

        if (applicationId != BlockDbSql.ApplicationId)
        {
            throw new BlockDbFormatException(
                $"{Quoted.Path(path)} is a SQLite database of another application (application_id {applicationId}, user_version {version}, {objects} schema objects); BlockDb opens only files it created (application_id {BlockDbSql.ApplicationId}), empty files and Duplicati local databases (schema {Layouts.Duplicati.DuplicatiFile.SupportedVersion}).");
        }

        var layout = Requested(ReadLayout(connection, path, version), requested, path);
        return (layout, layout.Inspect(connection, path, version));
    }

    /// <summary>The file's layout, when <paramref name="requested"/> (<c>Index:Layout</c>) is unset or the same.</summary>
    private static LayoutDefinition Requested(LayoutDefinition layout, BlockLayout? requested, string path) =>
        requested is { } wanted && wanted != layout.Layout
            ? throw new BlockDbFormatException(
                $"{Quoted.Path(path)} has the {layout.Layout} block layout, but BlockDb:Index:Layout asks for {wanted}; a file keeps the layout it was created with. Leave Index:Layout unset to open any layout, or set it to {layout.Layout}.")
            : layout;

    private static void Create(ISqliteConnection connection, LayoutDefinition layout)
    {
        foreach (var sql in layout.CreateSchema())
        {
            connection.Execute(sql);
        }

        connection.Execute(BlockDbSql.SettingsTableIfMissing);
        using (var write = connection.Prepare(BlockDbSql.WriteSettingIfMissing))
        {
            write.BindText(1, BlockDbSql.LayoutSetting);
            write.BindText(2, layout.Layout.ToString());
            write.ExecuteNonQuery();
        }

        connection.Execute(string.Create(CultureInfo.InvariantCulture, $"PRAGMA application_id = {BlockDbSql.ApplicationId}"));
        connection.Execute(VersionPragma(layout.SchemaVersion));
    }

    private static LayoutDefinition ReadLayout(ISqliteConnection connection, string path, long version)
    {
        if (version == SchemaVersions.TextHashOnly)
        {
            return TextHashLayout.Instance;
        }

        if (version is < SchemaVersions.Oldest or > SchemaVersions.Current)
        {
            throw new BlockDbFormatException(
                $"{Quoted.Path(path)} has BlockDb schema version {version}; this build reads versions {SchemaVersions.Oldest} to {SchemaVersions.Current} only{(version > SchemaVersions.Current ? " (the file was written by a newer BlockDb)" : string.Empty)}.");
        }

        string? name;
        using (var read = connection.Prepare(BlockDbSql.ReadSetting))
        {
            read.BindText(1, BlockDbSql.LayoutSetting);
            name = read.Step() ? read.ColumnText(0) : null;
            read.Reset();
        }

        if (name is null)
        {
            throw new BlockDbFormatException($"{Quoted.Path(path)} has BlockDb schema version {version} but no {BlockDbSql.LayoutSetting} setting; the file is damaged or was not written by BlockDb.");
        }

        return LayoutCatalog.ByRecordedName(name) ?? throw new BlockDbFormatException(
            $"{Quoted.Path(path)} uses the block layout {Quoted.Value(name)}, which this build does not know (it knows {string.Join(", ", LayoutCatalog.Created)}); open it with the newer BlockDb that wrote it.");
    }

    private static string VersionPragma(int version) => string.Create(CultureInfo.InvariantCulture, $"PRAGMA user_version = {version}");

    private static long ReadInt(ISqliteConnection connection, string sql) =>
        long.Parse(connection.QueryText(sql) ?? "0", NumberStyles.Integer, CultureInfo.InvariantCulture);
}
