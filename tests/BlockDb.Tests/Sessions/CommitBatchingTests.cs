using System.Diagnostics;

namespace BlockDb.Tests.Sessions;

/// <summary>
/// A session's write batch, for every provider and layout, PostgreSQL included: committed at exactly the nth write and
/// invisible to others before, a span call as one transaction committed at its end, at once with CommitEvery 1, only
/// when asked with CommitEvery 0, by age with no further write; a rollback discards the open batch only, and a failed
/// write in an empty batch keeps no write lock.
/// </summary>
public sealed class CommitBatchingTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_batch_of_n_writes_commits_exactly_at_the_nth_and_is_invisible_to_another_connection_before(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 3);
        await using var writer = await db.OpenSessionAsync();
        await using var reader = await db.OpenSessionAsync();

        await writer.SelectXorInsertAsync(TestData.Block(1, 1));
        await writer.SelectXorInsertAsync(TestData.Block(2, 1));
        Assert.Equal(2, writer.PendingWrites);
        Assert.Equal(2, (await writer.GetCountsAsync()).Blocks);
        Assert.Equal(0, (await reader.GetCountsAsync()).Blocks);
        Assert.Null(await reader.FindBlockAsync(TestData.Block(1, 1)));

        await writer.AddBlocksetAsync(new[] { TestData.Block(1, 1), TestData.Block(2, 1) });
        Assert.Equal(0, writer.PendingWrites);
        Assert.Equal(new BlockDbCounts(2, 1, 2), await reader.GetCountsAsync());

        await writer.SelectXorInsertAsync(TestData.Block(3, 1));
        Assert.Equal(1, writer.PendingWrites);
        Assert.Equal(2, (await reader.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_span_select_xor_insert_is_one_transaction_committed_at_its_end_whatever_commit_every(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 3);
        await using var writer = await db.OpenSessionAsync();
        await using var reader = await db.OpenSessionAsync();
        BlockKey[] blocks = [.. Enumerable.Range(1, 5).Select(i => TestData.Block(i, 100))];
        var results = new SelectXorInsertResult[blocks.Length];

        // Commits come only between calls: the five writes are one transaction, committed after the call (5 >= 3),
        // not three of them in the middle of the call and two left pending.
        Assert.Equal(5, await writer.SelectXorInsertManyAsync(blocks, results));
        Assert.Equal(0, writer.PendingWrites);
        Assert.Equal(5, (await reader.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Commit_every_one_makes_each_write_visible_at_once(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var writer = await db.OpenSessionAsync();
        await using var reader = await db.OpenSessionAsync();
        var id = (await writer.SelectXorInsertAsync(TestData.Block(1, 1))).Id;
        Assert.Equal(0, writer.PendingWrites);
        Assert.Equal(id, await reader.FindBlockAsync(TestData.Block(1, 1)));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Commit_every_zero_commits_only_on_an_explicit_commit(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var writer = await db.OpenSessionAsync();
        await using var reader = await db.OpenSessionAsync();
        for (var i = 0; i < 50; i++)
        {
            await writer.SelectXorInsertAsync(TestData.Block(i, 1));
        }

        Assert.Equal(50, writer.PendingWrites);
        Assert.Equal(0, (await reader.GetCountsAsync()).Blocks);
        await writer.CommitAsync();
        Assert.Equal(0, writer.PendingWrites);
        Assert.Equal(50, (await reader.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task An_old_batch_commits_without_another_write(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        const int Age = 200;
        await using var db = Open(o => { o.Batching.CommitEvery = 0; o.Batching.CommitAfterMilliseconds = Age; });
        await using var writer = await db.OpenSessionAsync();
        await using var reader = await db.OpenSessionAsync();
        var sinceInsert = Stopwatch.StartNew();
        await writer.SelectXorInsertAsync(TestData.Block(1, 1));
        var pending = writer.PendingWrites;
        if (sinceInsert.ElapsedMilliseconds < Age / 2)
        {
            Assert.Equal(1, pending); // not yet old (on a loaded machine the timer may already have fired: then this proves nothing)
        }

        // The batch-age timer commits the idle batch: no further call of the writer is needed.
        var clock = Stopwatch.StartNew();
        while (writer.PendingWrites != 0 && clock.Elapsed < TimeSpan.FromSeconds(10))
        {
            await Task.Delay(10);
        }

        Assert.Equal(0, writer.PendingWrites);
        Assert.Equal(1, (await reader.GetCountsAsync()).Blocks);
        sinceInsert.Restart();
        await writer.SelectXorInsertAsync(TestData.Block(2, 1));
        pending = writer.PendingWrites;
        if (sinceInsert.ElapsedMilliseconds < Age / 2)
        {
            Assert.Equal(1, pending); // a new batch after the age commit
        }
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Rollback_discards_the_open_batch_only(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1, 1));
        await session.CommitAsync();
        await session.SelectXorInsertAsync(TestData.Block(2, 1));
        await session.RollbackAsync();
        Assert.Equal(0, session.PendingWrites);
        Assert.Equal(1, (await session.GetCountsAsync()).Blocks);
        Assert.True((await session.SelectXorInsertAsync(TestData.Block(2, 1))).Created);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_failed_write_in_an_empty_batch_does_not_keep_the_write_lock(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => { o.Batching.CommitEvery = 1; BusyTimeout(o, 300); });
        await using var first = await db.OpenSessionAsync();
        await first.SelectXorInsertAsync(TestData.Block(1, 1));
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await first.SelectXorInsertAsync(TestData.Block(3, 1), 1_000_000));
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await first.AddBlocksetAsync(new[] { TestData.Block(4, 1) }, new SelectXorInsertResult[1], default, 1_000_000));
        Assert.Equal(0, first.PendingWrites);

        await using var second = await db.OpenSessionAsync();
        Assert.True((await second.SelectXorInsertAsync(TestData.Block(2, 1))).Created);
    }
}
