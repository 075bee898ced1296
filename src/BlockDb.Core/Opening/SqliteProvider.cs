using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Sqlite;
using Microsoft.Extensions.Logging;

namespace BlockDb.Opening;

/// <summary>BlockDb's SQLite engine as a provider, over one <see cref="ISqliteDriver"/>: the settings only SQLite has are checked here.</summary>
internal sealed class SqliteProvider(ISqliteDriver driver) : IEngineProvider
{
    public ISqliteDriver Driver => driver;

    public string Name => driver.Name;

    public void Validate(BlockDbOptions options)
    {
        if (options.ConnectionString is not null)
        {
            throw new BlockDbConfigurationException(
                $"{BlockDbOptions.SectionName}:ConnectionString",
                $"BlockDb:ConnectionString is set, but the SQLite provider '{driver.Name}' opens a file: set BlockDb:DataSource to its path and remove ConnectionString, or choose a server provider (BlockDb:Provider = PostgreSql).");
        }

        const string setting = $"{BlockDbOptions.SectionName}:DataSource";
        var dataSource = options.DataSource;
        if (string.IsNullOrWhiteSpace(dataSource))
        {
            throw new BlockDbConfigurationException(setting, "BlockDb:DataSource is empty; set it to the path of the database file (its folder must exist).");
        }

        if (dataSource.Contains('\0', StringComparison.Ordinal))
        {
            throw new BlockDbConfigurationException(setting, "BlockDb:DataSource contains a NUL character; give a plain file path.");
        }

        if (dataSource.Trim() == ":memory:" || dataSource.StartsWith("file:", StringComparison.OrdinalIgnoreCase))
        {
            throw new BlockDbConfigurationException(setting, $"BlockDb:DataSource {Quoted.Path(dataSource)} is not a file path; BlockDb indexes live in files (URI and :memory: names are not accepted).");
        }

        // A configured layout is checked now; the layout of an existing file, once it is read at open.
        if (options.Index.Layout is { } layout)
        {
            LayoutCatalog.Of(layout).Validate(options);
        }
    }

    public IBlockDatabase Open(BlockDbProviderContext context)
    {
        var path = Path.GetFullPath(context.Options.DataSource!);
        var folder = Path.GetDirectoryName(path);
        if (folder is not null && !Directory.Exists(folder))
        {
            throw new BlockDbException(
                $"Cannot open {Quoted.Path(path)}: the folder {Quoted.Path(folder)} does not exist; create it first (BlockDb creates the file, not its folder).",
                SqliteResultCode.CantOpen,
                SqliteResultCode.CantOpen,
                null);
        }

        if (Directory.Exists(path))
        {
            throw new BlockDbException($"Cannot open {Quoted.Path(path)}: it is a folder, not a database file.", SqliteResultCode.CantOpen, SqliteResultCode.CantOpen, null);
        }

        // A layout BlockDb never creates is refused before SQLite would create an empty file at the path.
        if (context.Options.Index.Layout is { } layout && LayoutCatalog.Of(layout).CreateRefused is { } refused && !File.Exists(path))
        {
            throw new BlockDbFormatException($"{Quoted.Path(path)} does not exist and BlockDb:Index:Layout is {layout}: {refused}. Nothing was written.");
        }

        return new SqliteDatabase(context.Options, driver, path, context.LoggerFactory.CreateLogger<SqliteDatabase>());
    }
}
