using System.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Sessions;

/// <summary>
/// Read batching (<see cref="BatchingOptions.ReadsPerTransaction"/>): reads outside a write batch share one read
/// transaction. What it may cost is bounded staleness toward other processes and foreign SQL writers; what it must
/// never cost is a duplicate, a wrong ID from a write, a missed commit of this process, a snapshot held while idle,
/// or a foreign writer blocked in the rollback-journal modes. Real files, a foreign connection as the other writer.
/// </summary>
public sealed class ReadBatchingTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string, BlockLayout, SelectXorInsertStrategy> WritePaths()
    {
        var data = new TheoryData<string, BlockLayout, SelectXorInsertStrategy>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            data.Add(provider, BlockLayout.KeyMap, SelectXorInsertStrategy.SelectThenInsert);
            foreach (var strategy in Enum.GetValues<SelectXorInsertStrategy>())
            {
                data.Add(provider, BlockLayout.TextHash, strategy);
            }
        }

        return data;
    }

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    private IBlockDatabase Open(string path, string provider = "PInvoke", Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = path };
        configure?.Invoke(options);
        return BlockDatabase.Open(options);
    }

    /// <summary>Long bounds, so only the bound under test ends the snapshot.</summary>
    private static void HoldLong(BlockDbOptions o)
    {
        o.Batching.ReadsPerTransaction = 1000;
        o.Batching.ReadTransactionMilliseconds = 60_000;
    }

    [Theory]
    [MemberData(nameof(WritePaths))]
    public async Task A_write_after_a_stale_read_finds_the_foreign_block_and_never_duplicates_it(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        var path = _folder.File("stale-write.db");
        await using var db = Open(path, provider, o =>
        {
            HoldLong(o);
            o.Index.Layout = layout;
            o.SelectXorInsert = strategy;
        });
        await using var session = await db.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1, 10));
        await session.CommitAsync();

        // The snapshot is taken by this read; the foreign block is committed after it.
        Assert.Null(await session.FindBlockAsync(TestData.Block(2, 10)));
        using var raw = new RawSql(path);
        var foreign = raw.InsertBlock(TestData.Hash(2), 10, blob: layout != BlockLayout.TextHash);
        Assert.Null(await session.FindBlockAsync(TestData.Block(2, 10))); // the documented staleness: still the old snapshot

        // A write starts from a fresh transaction: it finds the foreign row, creates nothing.
        Assert.Equal(new SelectXorInsertResult(foreign, false), await session.SelectXorInsertAsync(TestData.Block(2, 10)));
        await session.CommitAsync();
        Assert.Equal(0, raw.DuplicateGroups());
        Assert.Equal(2, raw.Scalar("""SELECT COUNT(*) FROM "Block" """));
        Assert.Equal(foreign, await session.FindBlockAsync(TestData.Block(2, 10)));
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_commit_call_ends_the_snapshot_so_the_next_read_sees_foreign_commits(string provider)
    {
        var path = _folder.File("commit-refresh.db");
        await using var db = Open(path, provider, HoldLong);
        await using var session = await db.OpenSessionAsync();
        Assert.Equal(0, (await session.GetCountsAsync()).Blocks);
        using var raw = new RawSql(path);
        var id = raw.InsertBlock(TestData.Hash(7), 10);
        Assert.Equal(0, (await session.GetCountsAsync()).Blocks);

        await session.CommitAsync();
        Assert.Equal(1, (await session.GetCountsAsync()).Blocks);
        Assert.Equal(id, await session.FindBlockAsync(TestData.Block(7, 10)));

        raw.InsertBlock(TestData.Hash(8), 10);
        await session.RollbackAsync(); // a rollback call ends it too
        Assert.Equal(2, (await session.GetCountsAsync()).Blocks);
    }

    [Fact]
    public async Task The_read_limit_bounds_the_snapshot_to_that_many_reads()
    {
        var path = _folder.File("limit.db");
        await using var db = Open(path, configure: o =>
        {
            HoldLong(o);
            o.Batching.ReadsPerTransaction = 3;
        });
        await using var session = await db.OpenSessionAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10))); // read 1 takes the snapshot
        using var raw = new RawSql(path);
        var id = raw.InsertBlock(TestData.Hash(1), 10);
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10))); // read 2
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10))); // read 3
        Assert.Equal(id, await session.FindBlockAsync(TestData.Block(1, 10))); // read 4: a new transaction
    }

    [Fact]
    public async Task The_age_bound_ends_the_snapshot_even_while_reads_continue()
    {
        var path = _folder.File("age.db");
        await using var db = Open(path, configure: o =>
        {
            o.Batching.ReadsPerTransaction = 1_000_000;
            o.Batching.ReadTransactionMilliseconds = 200;
        });
        await using var session = await db.OpenSessionAsync();

        // The clock starts before the find that takes the snapshot, so the foreign insert's own time (long on a loaded
        // machine) counts towards the snapshot's age, as it does inside the session.
        var clock = Stopwatch.StartNew();
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10)));
        using var raw = new RawSql(path);
        var id = raw.InsertBlock(TestData.Hash(1), 10);
        long? found = null;
        while (found is null && clock.ElapsedMilliseconds < 30_000)
        {
            found = await session.FindBlockAsync(TestData.Block(1, 10));
        }

        Assert.Equal(id, found);
        Assert.True(clock.ElapsedMilliseconds >= 150, $"seen after {clock.ElapsedMilliseconds} ms: the snapshot did not last its 200 ms bound (batching was off?)");
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Commits_of_this_process_are_seen_at_once_by_every_session_and_database_on_the_file(string provider)
    {
        var path = _folder.File("in-process.db");
        await using var a = Open(path, provider, HoldLong);
        await using var b = Open(path, provider, HoldLong);
        await using var reader = await a.OpenSessionAsync();
        await using var sameDb = await a.OpenSessionAsync();
        await using var otherDb = await b.OpenSessionAsync();

        Assert.Null(await reader.FindBlockAsync(TestData.Block(1, 10))); // snapshot taken
        var first = await sameDb.SelectXorInsertAsync(TestData.Block(1, 10));
        await sameDb.CommitAsync();
        Assert.Equal(first.Id, await reader.FindBlockAsync(TestData.Block(1, 10)));

        var second = await otherDb.SelectXorInsertAsync(TestData.Block(2, 10));
        await otherDb.CommitAsync();
        Assert.Equal(second.Id, await reader.FindBlockAsync(TestData.Block(2, 10)));
        Assert.Equal(2, (await reader.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task The_shared_session_reads_what_it_acknowledged(string provider)
    {
        var path = _folder.File("shared.db");
        await using var db = Open(path, provider, HoldLong);
        await using var shared = db.OpenSharedSession();
        for (var i = 0; i < 50; i++)
        {
            Assert.Null(await shared.FindBlockAsync(TestData.Block(i, 10)));
            var written = await shared.SelectXorInsertAsync(TestData.Block(i, 10));
            Assert.Equal(written.Id, await shared.FindBlockAsync(TestData.Block(i, 10)));
            Assert.Equal(i + 1, (await shared.GetCountsAsync()).Blocks);
        }
    }

    [Fact]
    public async Task An_idle_session_lets_go_of_its_snapshot_so_a_checkpoint_can_complete()
    {
        var path = _folder.File("idle.db");
        await using var db = Open(path, configure: o =>
        {
            o.Batching.ReadsPerTransaction = 1_000_000;
            o.Batching.ReadTransactionMilliseconds = 100;
        });
        await using var session = await db.OpenSessionAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10))); // holds a snapshot from here
        using var raw = new RawSql(path);
        for (var i = 0; i < 20; i++)
        {
            raw.InsertBlock(TestData.Hash(100 + i), 10);
        }

        // While the snapshot is held, a TRUNCATE checkpoint cannot reset the WAL (its first column is then 1, "busy").
        // The session makes no call; its timer must end the snapshot within its bound.
        var clock = Stopwatch.StartNew();
        string? result;
        do
        {
            await Task.Delay(50);
            result = raw.Text("PRAGMA wal_checkpoint(TRUNCATE)");
        }
        while (result != "0" && clock.ElapsedMilliseconds < 30_000);

        Assert.Equal("0", result);
        Assert.Equal(0, new FileInfo(path + "-wal").Length);
    }

    [Fact]
    public async Task An_idle_session_holding_a_snapshot_before_a_checkpoint_is_what_the_timer_prevents()
    {
        // The counterpart that proves the test above can fail: with the timer's bound far away the checkpoint stays busy.
        var path = _folder.File("held.db");
        await using var db = Open(path, configure: HoldLong);
        await using var session = await db.OpenSessionAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10)));
        using var raw = new RawSql(path);
        raw.InsertBlock(TestData.Hash(2), 10);
        await Task.Delay(300);
        Assert.Equal("1", raw.Text("PRAGMA wal_checkpoint(TRUNCATE)"));
        await session.CommitAsync();
        Assert.Equal("0", raw.Text("PRAGMA wal_checkpoint(TRUNCATE)"));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task In_the_rollback_journal_modes_reads_are_not_batched_by_default(string provider)
    {
        var path = _folder.File("delete-mode.db");
        await using var db = Open(path, provider, o => o.Pragmas.JournalMode = JournalMode.Delete);
        await using var session = await db.OpenSessionAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10)));

        // A held read would hold SQLite's SHARED lock and this writer (no busy wait) would get SQLITE_BUSY.
        using var raw = new RawSql(path, busyTimeoutMilliseconds: 0);
        var id = raw.InsertBlock(TestData.Hash(1), 10);
        Assert.Equal(id, await session.FindBlockAsync(TestData.Block(1, 10)));
    }

    [Fact]
    public async Task One_read_per_transaction_turns_batching_off()
    {
        var path = _folder.File("off.db");
        await using var db = Open(path, configure: o => o.Batching.ReadsPerTransaction = 1);
        await using var session = await db.OpenSessionAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10)));
        using var raw = new RawSql(path);
        var id = raw.InsertBlock(TestData.Hash(1), 10);
        Assert.Equal(id, await session.FindBlockAsync(TestData.Block(1, 10)));
    }

    [Fact]
    public async Task A_failed_read_does_not_keep_the_snapshot()
    {
        var path = _folder.File("failed-read.db");
        await using var db = Open(path, configure: HoldLong);
        await using var session = await db.OpenSessionAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10)));
        using var raw = new RawSql(path);
        var id = raw.InsertBlock(TestData.Hash(1), 10);
        await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await session.GetBlocksetAsync(12345));
        Assert.Equal(id, await session.FindBlockAsync(TestData.Block(1, 10)));
    }

    [Fact]
    public async Task Dispose_ends_the_snapshot_and_reads_are_never_left_open()
    {
        var path = _folder.File("dispose.db");
        await using var db = Open(path, configure: HoldLong);
        var session = await db.OpenSessionAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10)));
        await session.DisposeAsync();
        using var raw = new RawSql(path);
        raw.InsertBlock(TestData.Hash(1), 10);
        Assert.Equal("0", raw.Text("PRAGMA wal_checkpoint(TRUNCATE)"));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1_000_001)]
    public void Out_of_range_read_limits_are_refused_with_the_setting_named(int reads)
    {
        var e = Assert.Throws<BlockDbConfigurationException>(() => Open(_folder.File("bad.db"), configure: o => o.Batching.ReadsPerTransaction = reads));
        Assert.Contains("ReadsPerTransaction", e.Message, StringComparison.Ordinal);
        Assert.False(File.Exists(_folder.File("bad.db")));
    }

    [Fact]
    public void Out_of_range_read_ages_are_refused_with_the_setting_named()
    {
        var e = Assert.Throws<BlockDbConfigurationException>(() => Open(_folder.File("bad-age.db"), configure: o => o.Batching.ReadTransactionMilliseconds = 0));
        Assert.Contains("ReadTransactionMilliseconds", e.Message, StringComparison.Ordinal);
    }
}
