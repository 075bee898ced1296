using System.Globalization;
using BlockDb.Drivers;
using Microsoft.Extensions.Logging;

namespace BlockDb;

/// <summary>
/// Checks that a file is a BlockDb index this build can use and returns its layout; creates the schema in a new
/// file, upgrades a version-2 KeyMap file to version 3 and restores removed KeyMap guards. The check runs in a
/// read transaction, so opening an existing file never waits for a writer; only creating or changing the schema
/// takes the write lock (and then checks again under it, so two processes cannot both create or upgrade).
/// </summary>
internal static class Schema
{
    private enum Change
    {
        None,
        Create,
        Upgrade,
        RestoreGuards,
    }

    public static BlockLayout Open(ISqliteConnection connection, string path, BlockLayout? requested, bool readOnly, ILogger logger)
    {
        var (layout, change) = Transactions.Run(connection, BlockDbSql.BeginRead, () => Inspect(connection, path, requested));
        if (change == Change.None)
        {
            return layout;
        }

        if (readOnly)
        {
            throw new BlockDbFormatException(change == Change.Create
                ? $"'{path}' is empty, and BlockDb:ReadOnly = true cannot create an index; open it once without ReadOnly."
                : $"'{path}' is a KeyMap index that needs a one-time schema change to version {BlockDbSql.SchemaVersion} (its guards), which BlockDb:ReadOnly = true cannot make; open it once without ReadOnly.");
        }

        (layout, change) = Transactions.Run(connection, BlockDbSql.Begin.Text, () =>
        {
            var found = Inspect(connection, path, requested);
            switch (found.Change)
            {
                case Change.Create:
                    Create(connection, found.Layout);
                    break;
                case Change.Upgrade:
                    RunAll(connection, BlockDbSql.KeyMapGuards);
                    connection.Execute(VersionPragma(BlockDbSql.SchemaVersion));
                    break;
                case Change.RestoreGuards:
                    var stateRowExisted = HasStateRow(connection);
                    RunAll(connection, BlockDbSql.KeyMapGuards);
                    connection.Execute(stateRowExisted
                        ? BlockDbSql.BumpGeneration
                        : string.Create(CultureInfo.InvariantCulture, $"""UPDATE "BlockDbState" SET "Generation" = {DateTime.UtcNow.Ticks}"""));
                    break;
            }

            return found;
        });

        switch (change)
        {
            case Change.Upgrade:
                logger.LogInformation("Upgraded '{Path}' to BlockDb schema version {Version}: the KeyMap guards (BlockDbState and its triggers) were added.", path, BlockDbSql.SchemaVersion);
                break;
            case Change.RestoreGuards:
                logger.LogWarning("'{Path}' had lost some of its KeyMap guards (removed by SQL outside BlockDb); they were re-created and every open key map will reload.", path);
                break;
        }

        return layout;
    }

    /// <summary>What the file is and what it needs; throws for files BlockDb must not touch.</summary>
    private static (BlockLayout Layout, Change Change) Inspect(ISqliteConnection connection, string path, BlockLayout? requested)
    {
        // The schema read first starts the snapshot the two header reads then share.
        var objects = ReadInt(connection, "SELECT COUNT(*) FROM sqlite_schema");
        var applicationId = ReadInt(connection, "PRAGMA application_id");
        var version = ReadInt(connection, "PRAGMA user_version");
        if (applicationId == 0 && version == 0 && objects == 0)
        {
            return (requested ?? IndexOptions.DefaultLayout, Change.Create);
        }

        if (applicationId != BlockDbSql.ApplicationId)
        {
            throw new BlockDbFormatException(
                $"'{path}' is a SQLite database of another application (application_id {applicationId}, user_version {version}, {objects} schema objects); BlockDb opens only files it created (application_id {BlockDbSql.ApplicationId}) or empty files.");
        }

        var layout = ReadLayout(connection, path, version);
        if (requested is { } wanted && wanted != layout)
        {
            throw new BlockDbFormatException(
                $"'{path}' has the {layout} block layout, but BlockDb:Index:Layout asks for {wanted}; a file keeps the layout it was created with. Leave Index:Layout unset to open any layout, or set it to {layout}.");
        }

        if (layout != BlockLayout.KeyMap)
        {
            return (layout, Change.None);
        }

        if (version < BlockDbSql.SchemaVersion)
        {
            return (layout, Change.Upgrade);
        }

        return (layout, GuardsIntact(connection) ? Change.None : Change.RestoreGuards);
    }

    private static void Create(ISqliteConnection connection, BlockLayout layout)
    {
        RunAll(connection, BlockDbSql.Schema(layout));
        if (layout != BlockLayout.TextHash)
        {
            using var write = connection.Prepare(BlockDbSql.WriteSetting);
            write.BindText(1, BlockDbSql.LayoutSetting);
            write.BindText(2, layout.ToString());
            write.ExecuteNonQuery();
        }

        connection.Execute(string.Create(CultureInfo.InvariantCulture, $"PRAGMA application_id = {BlockDbSql.ApplicationId}"));
        connection.Execute(VersionPragma(BlockDbSql.SchemaVersionOf(layout)));
    }

    private static BlockLayout ReadLayout(ISqliteConnection connection, string path, long version)
    {
        if (version == BlockDbSql.TextHashSchemaVersion)
        {
            return BlockLayout.TextHash;
        }

        if (version is < BlockDbSql.BlobHashSchemaVersion or > BlockDbSql.SchemaVersion)
        {
            throw new BlockDbFormatException(
                $"'{path}' has BlockDb schema version {version}; this build reads versions {BlockDbSql.TextHashSchemaVersion} to {BlockDbSql.SchemaVersion} only{(version > BlockDbSql.SchemaVersion ? " (the file was written by a newer BlockDb)" : string.Empty)}.");
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
            throw new BlockDbFormatException($"'{path}' has BlockDb schema version {version} but no {BlockDbSql.LayoutSetting} setting; the file is damaged or was not written by BlockDb.");
        }

        // The exact names of the BLOB layouts only: a number, another case or an unknown name is refused, never guessed.
        if (name is not (nameof(BlockLayout.BlobHash) or nameof(BlockLayout.KeyMap)))
        {
            throw new BlockDbFormatException(
                $"'{path}' uses the block layout '{name}', which this build does not know (it knows {BlockLayout.BlobHash} and {BlockLayout.KeyMap} for version {version}); open it with the newer BlockDb that wrote it.");
        }

        return Enum.Parse<BlockLayout>(name);
    }

    /// <summary>Every guard trigger with its exact text, and the state row.</summary>
    public static bool GuardsIntact(ISqliteConnection connection)
    {
        using var rows = connection.Prepare(BlockDbSql.KeyMapGuardRows);
        return KeyMap.KeyMapStatements.GuardsIntact(rows) && HasStateRow(connection);
    }

    private static bool HasStateRow(ISqliteConnection connection) =>
        ReadInt(connection, """SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'BlockDbState'""") == 1
        && ReadInt(connection, """SELECT COUNT(*) FROM "BlockDbState" WHERE "Key" = 1""") == 1;

    private static void RunAll(ISqliteConnection connection, IEnumerable<string> statements)
    {
        foreach (var sql in statements)
        {
            connection.Execute(sql);
        }
    }

    private static string VersionPragma(int version) => string.Create(CultureInfo.InvariantCulture, $"PRAGMA user_version = {version}");

    private static long ReadInt(ISqliteConnection connection, string sql) =>
        long.Parse(connection.QueryText(sql) ?? "0", NumberStyles.Integer, CultureInfo.InvariantCulture);
}
