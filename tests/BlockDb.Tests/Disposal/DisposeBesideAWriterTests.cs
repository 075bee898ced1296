using System.Diagnostics;
using BlockDb.KeyMap;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Disposal;

/// <summary>
/// Disposing a database while another process holds the write lock (an open batch): a database that only read never
/// waits for it, and one that wrote waits at most the key-map snapshot's bound, on every provider, whatever the
/// configured busy timeout. The bound asserted (3 s against a 10 s busy timeout) is a behaviour, not a benchmark.
/// </summary>
public sealed class DisposeBesideAWriterTests(ITestOutputHelper output) : IDisposable
{
    private const int Blocks = 2000;
    private const int BusyTimeout = 10_000;
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(3);
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static TheoryData<string, bool> ProvidersWithSnapshot()
    {
        var data = new TheoryData<string, bool>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            data.Add(provider, true);
            data.Add(provider, false);
        }

        return data;
    }

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    private static IBlockDatabase Open(string path, string provider, CapturingLoggerFactory log, KeyMapFileMode snapshot = KeyMapFileMode.OnDispose) =>
        new BlockDatabaseBuilder(new BlockDbOptions
        {
            Provider = provider,
            DataSource = path,
            Index = { Layout = BlockLayout.KeyMap, KeyMapFile = snapshot },
            Pragmas = { BusyTimeout = BusyTimeout },
        }).UseLoggerFactory(log).Build();

    /// <summary>Writes blocks 0 to <see cref="Blocks"/> − 1 and disposes (leaving a current snapshot when <paramref name="snapshot"/>).</summary>
    private static async Task Seed(string path, string provider, bool snapshot)
    {
        await using var db = Open(path, provider, new CapturingLoggerFactory(), snapshot ? KeyMapFileMode.OnDispose : KeyMapFileMode.Off);
        await using var session = await db.OpenSessionAsync();
        for (var i = 0; i < Blocks; i++)
        {
            await session.SelectXorInsertAsync(TestData.Block(i, 100 + i));
        }
    }

    private static async Task<ChildProcess> HoldWriteLock(string path, string provider)
    {
        var locker = new ChildProcess("lock", path, provider, "60000");
        await locker.Ready.WaitAsync(TimeSpan.FromMinutes(2));
        Assert.Contains("LOCKED", locker.Lines);
        return locker;
    }

    private static async Task AssertEveryBlockFound(string path, string provider, int count)
    {
        await using var db = Open(path, provider, new CapturingLoggerFactory());
        await using var session = await db.OpenSessionAsync();
        for (var i = 0; i < count; i++)
        {
            Assert.NotNull(await session.FindBlockAsync(TestData.Block(i, 100 + i)));
        }

        Assert.Equal(count, (await session.GetCountsAsync()).Blocks);
    }

    private static string Snapshots(CapturingLoggerFactory log) =>
        string.Join(" | ", log.Messages.Where(m => m.Id is 13 or 14 or 15).Select(m => $"{m.Name}: {m.Text}"));

    /// <summary>
    /// A restore or verify process opened read-write and only reads, beside a backup holding its batch. Its map came
    /// from the current snapshot (nothing to write, so no lock is asked for) or from a scan (worth writing, but not
    /// worth waiting for: the lock is tried once, found held, and the snapshot skipped).
    /// </summary>
    [Theory]
    [MemberData(nameof(ProvidersWithSnapshot))]
    public async Task A_database_that_only_read_disposes_without_waiting_for_another_process_holding_the_write_lock(string provider, bool snapshot)
    {
        var path = _folder.File("reader.db");
        await Seed(path, provider, snapshot);
        using var locker = await HoldWriteLock(path, provider);

        // Reads through a session and a shared session, both left open: the database's dispose ends the session's
        // batch (OnDispose = Commit, nothing written), the shared session's writer and its reader pool, then the map.
        var log = new CapturingLoggerFactory();
        var db = Open(path, provider, log);
        var session = await db.OpenSessionAsync();
        var shared = db.OpenSharedSession();
        for (var i = 0; i < Blocks; i += 10)
        {
            Assert.NotNull(await session.FindBlockAsync(TestData.Block(i, 100 + i)));
            Assert.NotNull(await shared.FindBlockAsync(TestData.Block(i + 1, 101 + i)));
        }

        var clock = Stopwatch.StartNew();
        await db.DisposeAsync();
        clock.Stop();
        output.WriteLine($"{provider}, snapshot {snapshot}: dispose {clock.Elapsed.TotalMilliseconds:F0} ms; {Snapshots(log)}");

        Assert.True(clock.Elapsed < Bound, $"the dispose of a database that only read took {clock.Elapsed} beside another process's write lock (busy_timeout {BusyTimeout} ms); {Snapshots(log)}");
        Assert.Equal(0, log.Count(15, "KeyMapSnapshotWriteFailed"));
        Assert.Equal(0, log.Count(13, "KeyMapSnapshotWritten"));
        var skipped = Assert.Single(log.Messages, m => m.Id == 14).Text;
        Assert.Contains(snapshot ? "gained nothing" : "holds the write lock", skipped, StringComparison.Ordinal);

        locker.Kill();
        await AssertEveryBlockFound(path, provider, Blocks);
    }

    /// <summary>A database that wrote blocks waits for the write lock at most <see cref="KeyMapFile.WriteLockWaitMilliseconds"/>, then skips its snapshot (logged), whatever the provider retries on its own.</summary>
    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_database_that_wrote_waits_at_most_the_snapshot_bound_for_another_process_holding_the_write_lock(string provider)
    {
        var path = _folder.File("writer.db");
        await Seed(path, provider, snapshot: true);

        var log = new CapturingLoggerFactory();
        var db = Open(path, provider, log);
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = Blocks; i < Blocks + 100; i++)
            {
                Assert.True((await session.SelectXorInsertAsync(TestData.Block(i, 100 + i))).Created);
            }
        }

        using var locker = await HoldWriteLock(path, provider);
        var clock = Stopwatch.StartNew();
        await db.DisposeAsync();
        clock.Stop();
        output.WriteLine($"{provider}, wrote: dispose {clock.Elapsed.TotalMilliseconds:F0} ms; {Snapshots(log)}");

        Assert.True(clock.Elapsed < Bound, $"the dispose of a database that wrote took {clock.Elapsed} beside another process's write lock (busy_timeout {BusyTimeout} ms, snapshot bound {KeyMapFile.WriteLockWaitMilliseconds} ms); {Snapshots(log)}");
        Assert.Equal(0, log.Count(15, "KeyMapSnapshotWriteFailed"));
        Assert.Contains("holds the write lock", Assert.Single(log.Messages, m => m.Id == 14).Text, StringComparison.Ordinal);

        locker.Kill();
        await AssertEveryBlockFound(path, provider, Blocks + 100);
    }
}
