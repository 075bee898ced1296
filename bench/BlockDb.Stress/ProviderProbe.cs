using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Stress;

/// <summary>
/// Small one-process checks of a provider that the tests run as a child process, because they depend on what the
/// process did first (SQLite's log is process-wide) or on what it can load (its native library).
/// </summary>
internal static class ProviderProbe
{
    /// <summary>
    /// SQLite's error log around closing connections: installs the log first (<see cref="SqliteLog"/>), then closes a
    /// connection with no transaction, one with an open write transaction, one beside another connection's read
    /// transaction (the close guard's sentinel path) and the last one, then runs one failing statement so the log is
    /// shown to be captured. Prints <c>SQLITELOG</c> lines and <c>CLOSELOG done</c>.
    /// </summary>
    public static int CloseLog(string path, string provider)
    {
        SqliteLog.Start("closelog");
        var driver = ProviderCatalog.SqliteDriver(provider);
        using (var setup = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate, 1000)))
        {
            setup.Execute("CREATE TABLE IF NOT EXISTS \"Item\" (\"ID\" INTEGER PRIMARY KEY)");
        }

        using (var writer = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 1000)))
        {
            writer.Execute("BEGIN IMMEDIATE");
            writer.Execute("INSERT INTO \"Item\" DEFAULT VALUES");
        }

        using (var reader = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 1000)))
        {
            reader.Execute("BEGIN");
            reader.QueryText("SELECT COUNT(*) FROM \"Item\"");
            driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 1000)).Dispose();
            reader.Execute("COMMIT");
        }

        using (var last = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 1000)))
        {
            try
            {
                last.QueryText("SELECT * FROM \"NoSuchTable\"");
            }
            catch (BlockDbException)
            {
                // Expected: SQLite logs "no such table: NoSuchTable".
            }
        }

        Output.Line("CLOSELOG done");
        return 0;
    }

    /// <summary>
    /// Opens a BlockDb index with <paramref name="provider"/> and asks the driver for its native library version,
    /// printing <c>OPENED</c> or <c>ERROR &lt;exception type&gt;: &lt;message on one line&gt;</c> for each.
    /// </summary>
    public static async Task<int> OpenAsync(string path, string provider)
    {
        try
        {
            await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
            Output.Line($"OPENED {db.ProviderName} {db.EngineVersion}");
        }
        catch (Exception e)
        {
            Output.Line($"ERROR {e.GetType().FullName}: {e.Message.ReplaceLineEndings(" ")}");
        }

        try
        {
            Output.Line($"VERSION {ProviderCatalog.SqliteDriver(provider).NativeLibraryVersion}");
        }
        catch (Exception e)
        {
            Output.Line($"ERROR {e.GetType().FullName}: {e.Message.ReplaceLineEndings(" ")}");
        }

        return 0;
    }
}
