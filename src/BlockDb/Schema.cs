using System.Globalization;
using BlockDb.Drivers;

namespace BlockDb;

/// <summary>Creates the schema in a new file, or checks that an existing file is a BlockDb index this build can read, and returns its layout.</summary>
internal static class Schema
{
    public static BlockLayout EnsureCreated(ISqliteConnection connection, string path, BlockLayout? requested)
    {
        // BEGIN IMMEDIATE first, so two processes creating the same new file cannot both create it.
        connection.Execute(BlockDbSql.Begin.Text);
        try
        {
            var applicationId = ReadInt(connection, "PRAGMA application_id");
            var version = ReadInt(connection, "PRAGMA user_version");
            var objects = ReadInt(connection, "SELECT COUNT(*) FROM sqlite_schema");
            BlockLayout layout;
            if (applicationId == 0 && version == 0 && objects == 0)
            {
                layout = requested ?? IndexOptions.DefaultLayout;
                Create(connection, layout);
            }
            else if (applicationId != BlockDbSql.ApplicationId)
            {
                throw new BlockDbFormatException(
                    $"'{path}' is a SQLite database of another application (application_id {applicationId}, user_version {version}, {objects} schema objects); BlockDb opens only files it created (application_id {BlockDbSql.ApplicationId}) or empty files.");
            }
            else
            {
                layout = ReadLayout(connection, path, version);
            }

            if (requested is { } wanted && wanted != layout)
            {
                throw new BlockDbFormatException(
                    $"'{path}' has the {layout} block layout, but BlockDb:Index:Layout asks for {wanted}; a file keeps the layout it was created with. Leave Index:Layout unset to open any layout, or set it to {layout}.");
            }

            connection.Execute(BlockDbSql.Commit.Text);
            return layout;
        }
        catch
        {
            if (connection.InTransaction)
            {
                connection.Execute(BlockDbSql.Rollback.Text);
            }

            throw;
        }
    }

    private static void Create(ISqliteConnection connection, BlockLayout layout)
    {
        if (layout == BlockLayout.TextHash)
        {
            foreach (var ddl in BlockDbSql.SchemaV1)
            {
                connection.Execute(ddl);
            }
        }
        else
        {
            foreach (var ddl in BlockDbSql.SchemaV2(layout))
            {
                connection.Execute(ddl);
            }

            using var write = connection.Prepare(BlockDbSql.WriteSetting);
            write.BindText(1, BlockDbSql.LayoutSetting);
            write.BindText(2, layout.ToString());
            write.ExecuteNonQuery();
        }

        var version = layout == BlockLayout.TextHash ? BlockDbSql.TextHashSchemaVersion : BlockDbSql.SchemaVersion;
        connection.Execute(string.Create(CultureInfo.InvariantCulture, $"PRAGMA application_id = {BlockDbSql.ApplicationId}"));
        connection.Execute(string.Create(CultureInfo.InvariantCulture, $"PRAGMA user_version = {version}"));
    }

    private static BlockLayout ReadLayout(ISqliteConnection connection, string path, long version)
    {
        if (version == BlockDbSql.TextHashSchemaVersion)
        {
            return BlockLayout.TextHash;
        }

        if (version != BlockDbSql.SchemaVersion)
        {
            throw new BlockDbFormatException(
                $"'{path}' has BlockDb schema version {version}; this build reads versions {BlockDbSql.TextHashSchemaVersion} and {BlockDbSql.SchemaVersion} only{(version > BlockDbSql.SchemaVersion ? " (the file was written by a newer BlockDb)" : string.Empty)}.");
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

        // The exact names of the version-2 layouts only: a number, another case or an unknown name is refused, never guessed.
        if (name is not (nameof(BlockLayout.BlobHash) or nameof(BlockLayout.KeyMap)))
        {
            throw new BlockDbFormatException(
                $"'{path}' uses the block layout '{name}', which this build does not know (it knows {BlockLayout.BlobHash} and {BlockLayout.KeyMap} for version {version}); open it with the newer BlockDb that wrote it.");
        }

        return Enum.Parse<BlockLayout>(name);
    }

    private static long ReadInt(ISqliteConnection connection, string sql) =>
        long.Parse(connection.QueryText(sql) ?? "0", NumberStyles.Integer, CultureInfo.InvariantCulture);
}
