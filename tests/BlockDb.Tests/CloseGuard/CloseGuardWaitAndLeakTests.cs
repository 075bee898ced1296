using System.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.CloseGuard;

/// <summary>
/// Adversarial checks of <see cref="SqliteCloseGuard"/>: hangs and spurious BUSY errors its sentinel wait adds,
/// leaks after whole databases are opened and disposed, and files that vanish while open.
/// </summary>
public sealed class CloseGuardWaitAndLeakTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string> Providers()
    {
        var data = new TheoryData<string>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            data.Add(provider);
        }

        return data;
    }

    public void Dispose() => _folder.Dispose();

    private string CreateFile(ISqliteDriver driver, string name)
    {
        var path = _folder.File(name);
        using var setup = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate));
        setup.Execute("PRAGMA journal_mode = DELETE");
        setup.Execute("CREATE TABLE \"Item\" (\"ID\" INTEGER PRIMARY KEY)");
        return path;
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void Dispose_beside_the_same_threads_exclusive_lock_does_not_wait_for_the_whole_busy_timeout(string provider)
    {
        // A thread in a write transaction that has taken the EXCLUSIVE lock (a spilled cache, BEGIN EXCLUSIVE)
        // disposes another connection of the file: nothing can release that lock while the thread waits, so the
        // sentinel's wait only delays the dispose (and holds the file's gate, blocking every open and close of the
        // file in the process). With a 20 s busy timeout (BlockDb allows up to an hour) it waited 20 s, before the
        // guard it returned at once; a deferred close is safe, so the wait need not be long.
        var driver = ProviderCatalog.SqliteDriver(provider);
        var path = CreateFile(driver, "self.db");
        using var writer = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 20_000));
        var closing = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 20_000));
        closing.QueryText("SELECT COUNT(*) FROM \"Item\"");
        writer.Execute("BEGIN EXCLUSIVE");
        writer.Execute("INSERT INTO \"Item\" DEFAULT VALUES");

        var clock = Stopwatch.StartNew();
        closing.Dispose();
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(8), $"the dispose took {clock.Elapsed}");

        writer.Execute("COMMIT");
        Assert.Equal((2, 1), SqliteCloseGuard.Count(path));
        writer.Dispose();
        Assert.Equal((0, 0), SqliteCloseGuard.Count(path));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_close_waiting_behind_a_pending_writer_does_not_make_the_writers_commit_fail(string provider)
    {
        // Reader R holds a read transaction and opens another connection of the file before ending it (a cursor
        // open while a session opens); writer W's COMMIT waits (PENDING) for R's SHARED lock; a third thread
        // disposes connection C, so the sentinel waits behind W's PENDING lock while holding the gate, and R's open
        // waits for the gate. Without the guard R opens at once, ends its read and W commits. With the sentinel
        // waiting as long as everyone's busy timeout, W's COMMIT ran out of time first and failed with SQLITE_BUSY.
        var driver = ProviderCatalog.SqliteDriver(provider);
        var path = CreateFile(driver, "pending.db");
        const int Timeout = 10_000;
        using var reader = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, Timeout));
        using var writer = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, Timeout));
        var closing = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, Timeout));
        reader.Execute($"PRAGMA busy_timeout = {Timeout}");
        writer.Execute($"PRAGMA busy_timeout = {Timeout}");
        closing.QueryText("SELECT COUNT(*) FROM \"Item\"");
        reader.Execute("BEGIN");
        reader.QueryText("SELECT COUNT(*) FROM \"Item\"");
        writer.Execute("BEGIN IMMEDIATE");
        writer.Execute("INSERT INTO \"Item\" DEFAULT VALUES");

        var commit = Task.Factory.StartNew(() => writer.Execute("COMMIT"), TaskCreationOptions.LongRunning);
        await Task.Delay(2000);
        Assert.False(commit.IsCompleted);
        var close = Task.Factory.StartNew(closing.Dispose, TaskCreationOptions.LongRunning);
        await Task.Delay(1000);

        using (var another = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, Timeout)))
        {
            reader.Execute("COMMIT");
        }

        await close.WaitAsync(TimeSpan.FromSeconds(60));
        var failure = await Record.ExceptionAsync(() => commit.WaitAsync(TimeSpan.FromSeconds(60)));
        Assert.Null(failure);
        Assert.Equal("1", reader.QueryText("SELECT COUNT(*) FROM \"Item\""));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Databases_opened_and_disposed_beside_each_other_leave_nothing_open(string provider)
    {
        var path = _folder.File("churn.db");
        BlockDbOptions Options() => new() { Provider = provider, DataSource = path, Index = { Layout = BlockLayout.KeyMap }, Pragmas = { BusyTimeout = 10_000 } };
        await using (var first = BlockDatabase.Open(Options()))
        {
        }

        var tasks = Enumerable.Range(0, 4).Select(t => Task.Run(async () =>
        {
            for (var round = 0; round < 6; round++)
            {
                await using var database = BlockDatabase.Open(Options());
                await using (var session = await database.OpenSessionAsync())
                {
                    await session.SelectXorInsertAsync(BlockKey.Parse(Hash($"h{t}-{round}"), 10));
                }

                await using var reader = await database.OpenSessionAsync();
                Assert.NotNull(await reader.FindBlockAsync(BlockKey.Parse(Hash($"h{t}-{round}"), 10)));
            }
        })).ToArray();
        await Task.WhenAll(tasks).WaitAsync(TimeSpan.FromSeconds(120));

        Assert.Equal((0, 0), SqliteCloseGuard.Count(path));
        Assert.Equal(0, ProcessFiles.Descriptors(path));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void A_file_deleted_while_open_is_closed_without_an_exception_and_nothing_stays_open(string provider)
    {
        var driver = ProviderCatalog.SqliteDriver(provider);
        var path = CreateFile(driver, "deleted.db");
        var kept = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 1000));
        var closing = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 1000));
        kept.QueryText("SELECT COUNT(*) FROM \"Item\"");
        closing.QueryText("SELECT COUNT(*) FROM \"Item\"");
        File.Delete(path);

        closing.Dispose();
        kept.Dispose();
        Assert.Equal((0, 0), SqliteCloseGuard.Count(path));
        Assert.Equal(0, Directory.GetFiles("/proc/self/fd").Count(fd =>
        {
            try
            {
                return new FileInfo(fd).LinkTarget?.StartsWith(path, StringComparison.Ordinal) == true;
            }
            catch (IOException)
            {
                return false;
            }
        }));
    }

    private static string Hash(string text) =>
        Convert.ToBase64String(System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(text)));
}
