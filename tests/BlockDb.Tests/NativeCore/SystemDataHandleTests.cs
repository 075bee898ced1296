using System.Data.SQLite;
using BlockDb.Drivers;
using BlockDb.Opening;
using BlockDb.SystemData;

namespace BlockDb.Tests.NativeCore;

/// <summary>
/// SystemData runs BlockDb's statements on the <c>sqlite3*</c> System.Data.SQLite opened, through the native core every
/// SQLite provider shares: the handle belongs to the one <c>e_sqlite3</c> loaded in the process, System.Data.SQLite's own
/// view of the connection (autocommit, last row id, busy timeout, its commands) stays in step with the statements run
/// beside it, and a dispose finalizes BlockDb's statements before System.Data.SQLite closes the handle.
/// </summary>
public sealed class SystemDataHandleTests : IDisposable
{
    private static readonly SqlStatement Insert = new("InsertItem", """INSERT INTO "Item" ("Key") VALUES (@Key)""", "@Key");

    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void Every_sqlite_provider_runs_on_one_loaded_e_sqlite3()
    {
        Assert.True(OperatingSystem.IsLinux(), "reads /proc/self/maps");
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            using var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(_folder.File(provider + ".db"), SqliteOpenMode.ReadWriteCreate));
            Assert.Equal("1", connection.QueryText("SELECT 1"));
        }

        var loaded = File.ReadLines("/proc/self/maps")
            .Select(line => line.Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Where(fields => fields.Length >= 6 && Path.GetFileName(fields[5]).StartsWith("libe_sqlite3", StringComparison.Ordinal))
            .Select(fields => fields[5])
            .Distinct()
            .ToList();
        Assert.Single(loaded);
    }

    [Fact]
    public void System_data_sqlite_sees_the_transaction_row_id_and_busy_timeout_of_blockdb_statements()
    {
        var path = _folder.File("coherent.db");
        var options = new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate);
        var sqlite = new SQLiteConnection(SystemDataDriver.ConnectionString(options), parseViaFramework: true);
        using (var connection = SystemDataConnection.Open(sqlite, path, busyTimeoutMilliseconds: 0))
        {
            connection.Execute("""CREATE TABLE "Item" ("ID" INTEGER PRIMARY KEY, "Key" INTEGER NOT NULL)""");
            connection.Execute("PRAGMA busy_timeout = 1234");
            Assert.Equal(1234L, Scalar(sqlite, "PRAGMA busy_timeout"));

            connection.Execute("BEGIN IMMEDIATE");
            Assert.False(sqlite.AutoCommit);
            Assert.True(connection.InTransaction);

            var statement = connection.Prepare(Insert); // left undisposed: the connection's dispose finalizes it
            statement.BindInt64(1, 7);
            Assert.Equal(1, statement.ExecuteNonQuery());
            Assert.Equal(1L, sqlite.LastInsertRowId);
            Assert.Equal(sqlite.LastInsertRowId, connection.LastInsertRowId);

            // System.Data.SQLite's own command runs in the same transaction and sees the uncommitted row.
            Assert.Equal(1L, Scalar(sqlite, """SELECT count(*) FROM "Item" WHERE "Key" = 7"""));

            connection.Execute("COMMIT");
            Assert.True(sqlite.AutoCommit);
            Assert.False(connection.InTransaction);
        }

        // Disposed (System.Data.SQLite's close, after BlockDb's statement was finalized) without an error; the file is whole.
        using var again = ProviderCatalog.SqliteDriver(ProviderCatalog.PInvoke).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));
        again.Execute("BEGIN EXCLUSIVE; COMMIT");
        Assert.Equal("1", again.QueryText("""SELECT count(*) FROM "Item" """));
    }

    private static long Scalar(SQLiteConnection connection, string sql)
    {
        using var command = new SQLiteCommand(sql, connection);
        return Convert.ToInt64(command.ExecuteScalar(), System.Globalization.CultureInfo.InvariantCulture);
    }
}
