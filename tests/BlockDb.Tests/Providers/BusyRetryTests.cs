using System.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Providers;

/// <summary>
/// The two ADO.NET-born providers keep their libraries' busy handling: a statement whose first step meets a lock held by
/// another connection is tried again until <c>max(busy_timeout, 1 s)</c> has passed, then fails with
/// <c>SQLITE_BUSY</c> as a <see cref="BlockDbException"/>, and the statement runs again once the lock is gone. MicrosoftData
/// runs its statements through SQLitePCL.raw, not Microsoft.Data.Sqlite's commands, and keeps that retry itself.
/// </summary>
public sealed class BusyRetryTests : IDisposable
{
    private static readonly SqlStatement Insert = new("InsertItem", """INSERT INTO "Item" ("Key") VALUES (@Key)""", "@Key");
    private static readonly SqlStatement Count = new("CountItems", """SELECT COUNT(*) FROM "Item" """);

    private readonly TempFolder _folder = new();

    public static TheoryData<string, bool> RetryingProviders() => new()
    {
        { ProviderCatalog.MicrosoftData, true },
        { ProviderCatalog.MicrosoftData, false },
        { ProviderCatalog.SystemData, true },
        { ProviderCatalog.SystemData, false },
    };

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(RetryingProviders))]
    public void A_statement_on_a_locked_file_waits_at_least_a_second_then_fails_with_SQLITE_BUSY(string provider, bool write)
    {
        var (connection, holder) = OpenLocked(provider, busyTimeoutMilliseconds: 200);
        using (connection)
        using (holder)
        using (var statement = connection.Prepare(write ? Insert : Count))
        {
            var clock = Stopwatch.StartNew();
            var e = Assert.Throws<BlockDbException>(() => Run(statement, write));
            clock.Stop();
            Assert.Equal(SqliteResultCode.Busy, e.SqliteErrorCode);
            Assert.True(e.IsTransient);

            // busy_timeout is 200 ms; the library-level retry lasts until 1 s (a lower bound: a loaded machine only adds).
            Assert.True(clock.ElapsedMilliseconds >= 900, $"failed after {clock.ElapsedMilliseconds} ms; the retry lasts until 1 s");

            holder.Execute("COMMIT");
            Run(statement, write);
            Assert.Equal(write ? "2" : "1", connection.QueryText(Count.Text));
        }
    }

    [Theory]
    [MemberData(nameof(RetryingProviders))]
    public void A_lock_released_within_the_retry_lets_the_statement_run(string provider, bool write)
    {
        var (connection, holder) = OpenLocked(provider, busyTimeoutMilliseconds: 0);
        using (connection)
        using (holder)
        using (var statement = connection.Prepare(write ? Insert : Count))
        {
            // Without busy_timeout SQLite fails the first step at once; the retry (every 150 ms for 1 s) gets through.
            // The lock is released from a thread of its own: a busy thread pool must not delay it past the retry.
            Exception? releaseFailure = null;
            var release = new Thread(() =>
            {
                try
                {
                    Thread.Sleep(200);
                    holder.Execute("COMMIT");
                }
                catch (Exception e)
                {
                    releaseFailure = e;
                }
            });
            release.Start();
            Run(statement, write);
            release.Join();
            Assert.Null(releaseFailure);
            Assert.Equal(write ? "2" : "1", connection.QueryText(Count.Text));
        }
    }

    /// <summary>A file with one row, a connection to it with <paramref name="busyTimeoutMilliseconds"/>, and a second connection holding an exclusive lock on it.</summary>
    private (ISqliteConnection Connection, ISqliteConnection Holder) OpenLocked(string provider, int busyTimeoutMilliseconds)
    {
        var driver = ProviderCatalog.SqliteDriver(provider);
        var path = _folder.File($"{provider}-{busyTimeoutMilliseconds}.db");
        var connection = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate, busyTimeoutMilliseconds));
        connection.Execute($"PRAGMA busy_timeout = {busyTimeoutMilliseconds}");
        connection.Execute("""CREATE TABLE "Item" ("Key" INTEGER PRIMARY KEY)""");
        connection.Execute("""INSERT INTO "Item" ("Key") VALUES (1)""");
        var holder = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));
        holder.Execute("BEGIN EXCLUSIVE"); // the default rollback journal: readers wait too
        return (connection, holder);
    }

    private static void Run(ISqliteStatement statement, bool write)
    {
        if (write)
        {
            statement.BindInt64(1, 2);
            Assert.Equal(1, statement.ExecuteNonQuery());
        }
        else
        {
            Assert.True(statement.Step());
            statement.Reset();
        }
    }
}
