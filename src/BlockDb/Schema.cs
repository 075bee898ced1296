using System.Globalization;
using BlockDb.Drivers;

namespace BlockDb;

/// <summary>Creates the schema in a new file, or checks that an existing file is a BlockDb index this build can read.</summary>
internal static class Schema
{
    public static void EnsureCreated(ISqliteConnection connection, string path)
    {
        // BEGIN IMMEDIATE first, so two processes creating the same new file cannot both create it.
        connection.Execute(BlockDbSql.Begin.Text);
        try
        {
            var applicationId = ReadInt(connection, "PRAGMA application_id");
            var version = ReadInt(connection, "PRAGMA user_version");
            var objects = ReadInt(connection, "SELECT COUNT(*) FROM sqlite_schema");
            if (applicationId == 0 && version == 0 && objects == 0)
            {
                foreach (var ddl in BlockDbSql.SchemaV1)
                {
                    connection.Execute(ddl);
                }

                connection.Execute(string.Create(CultureInfo.InvariantCulture, $"PRAGMA application_id = {BlockDbSql.ApplicationId}"));
                connection.Execute(string.Create(CultureInfo.InvariantCulture, $"PRAGMA user_version = {BlockDbSql.SchemaVersion}"));
            }
            else if (applicationId != BlockDbSql.ApplicationId)
            {
                throw new BlockDbFormatException(
                    $"'{path}' is a SQLite database of another application (application_id {applicationId}, user_version {version}, {objects} schema objects); BlockDb opens only files it created (application_id {BlockDbSql.ApplicationId}) or empty files.");
            }
            else if (version != BlockDbSql.SchemaVersion)
            {
                throw new BlockDbFormatException(
                    $"'{path}' has BlockDb schema version {version}; this build reads version {BlockDbSql.SchemaVersion} only{(version > BlockDbSql.SchemaVersion ? " (the file was written by a newer BlockDb)" : string.Empty)}.");
            }

            connection.Execute(BlockDbSql.Commit.Text);
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

    private static long ReadInt(ISqliteConnection connection, string sql) =>
        long.Parse(connection.QueryText(sql) ?? "0", NumberStyles.Integer, CultureInfo.InvariantCulture);
}
