using System.Diagnostics;
using System.Globalization;
using BlockDb.Drivers;

namespace BlockDb.Tests;

/// <summary>The operations of a session, for every provider and layout (<see cref="ConformanceTestBase.Matrix"/>).</summary>
public sealed class ConformanceTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_new_file_gets_the_schema_and_its_version(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using (var db = Open())
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(new BlockDbCounts(0, 0, 0), await session.GetCountsAsync());
            Assert.Equal(Provider, db.ProviderName, ignoreCase: true);
        }

        using var raw = BlockDbProviders.Get(Provider).Open(new SqliteOpenOptions(DbPath, SqliteOpenMode.ReadOnly));
        Assert.Equal(LayoutCatalog.Of(layout).SchemaVersion.ToString(CultureInfo.InvariantCulture), raw.QueryText("PRAGMA user_version"));
        Assert.Equal("1", raw.QueryText("""SELECT COUNT(*) FROM sqlite_schema WHERE name = 'BlockDbSettings'"""));
        Assert.Equal(layout.ToString(), raw.QueryText("""SELECT "Value" FROM "BlockDbSettings" WHERE "Name" = 'BlockLayout'"""));
        Assert.Equal("1", raw.QueryText("""SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'Remotevolume'"""));
        Assert.Equal("1", raw.QueryText("""SELECT COUNT(*) FROM pragma_table_info('Block') WHERE name = 'VolumeID'"""));

        Assert.Equal(layout == BlockLayout.KeyMap ? "0" : "1", raw.QueryText("""SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND name = 'BlockHashSize'"""));
        Assert.Equal(BlockDbSql.ApplicationId.ToString(), raw.QueryText("PRAGMA application_id"));
        Assert.Equal("3", raw.QueryText("""SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('Block', 'Blockset', 'BlocksetEntry')"""));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Insert_then_find_returns_the_same_id_and_find_of_a_missing_block_returns_null(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var a = await session.InsertBlockAsync(TestData.Hash(1), 100);
        var b = await session.InsertBlockAsync(TestData.Hash(2), 100);
        Assert.NotEqual(a, b);
        Assert.Equal(a, await session.FindBlockAsync(TestData.Hash(1), 100));
        Assert.Equal(b, await session.FindBlockAsync(TestData.Hash(2), 100));
        Assert.Null(await session.FindBlockAsync(TestData.Hash(1), 101));
        Assert.Null(await session.FindBlockAsync(TestData.Hash(3), 100));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Inserting_an_existing_block_fails_with_sqlites_constraint_code_and_keeps_the_batch(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        await session.InsertBlockAsync(TestData.Hash(1), 100);
        await session.InsertBlockAsync(TestData.Hash(2), 100);
        var e = await Assert.ThrowsAsync<BlockDbException>(async () => await session.InsertBlockAsync(TestData.Hash(1), 100));
        AssertUniqueViolation(e);
        Assert.Equal(2, session.PendingWrites);
        await session.CommitAsync();
        await using var other = await db.OpenSessionAsync();
        Assert.Equal(2, (await other.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_failed_write_in_an_empty_batch_does_not_keep_the_write_lock(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => { o.Batching.CommitEvery = 1; BusyTimeout(o, 300); });
        await using var first = await db.OpenSessionAsync();
        await first.InsertBlockAsync(TestData.Hash(1), 1);
        await Assert.ThrowsAsync<BlockDbException>(async () => await first.InsertBlockAsync(TestData.Hash(1), 1));
        await Assert.ThrowsAsync<BlockNotFoundException>(async () => await first.AddBlocksetAsync(new[] { 999L }));
        Assert.Equal(0, first.PendingWrites);

        await using var second = await db.OpenSessionAsync();
        Assert.True((await second.SelectXorInsertAsync(TestData.Hash(2), 1)).Created);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrixWithStrategies), MemberType = typeof(ConformanceTestBase))]
    public async Task Select_xor_insert_gives_one_id_per_block_across_sessions_and_reopening(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        Use(provider, layout);
        long id;
        await using (var db = Open(o => o.SelectXorInsert = strategy))
        {
            await using (var session = await db.OpenSessionAsync())
            {
                var first = await session.SelectXorInsertAsync(TestData.Hash(7), 4096);
                var again = await session.SelectXorInsertAsync(TestData.Hash(7), 4096);
                var otherSize = await session.SelectXorInsertAsync(TestData.Hash(7), 4097);
                Assert.True(first.Created);
                Assert.False(again.Created);
                Assert.Equal(first.Id, again.Id);
                Assert.True(otherSize.Created);
                Assert.NotEqual(first.Id, otherSize.Id);
                id = first.Id;
            }

            await using var second = await db.OpenSessionAsync();
            Assert.Equal(new SelectXorInsertResult(id, false), await second.SelectXorInsertAsync(TestData.Hash(7), 4096));
        }

        await using (var reopened = Open(o => o.SelectXorInsert = strategy))
        await using (var session = await reopened.OpenSessionAsync())
        {
            Assert.Equal(new SelectXorInsertResult(id, false), await session.SelectXorInsertAsync(TestData.Hash(7), 4096));
            Assert.Equal(2, (await session.GetCountsAsync()).Blocks);
        }
    }

    [Theory]
    [MemberData(nameof(MatrixWithRefusedStrategies), MemberType = typeof(ConformanceTestBase))]
    public async Task A_strategy_the_layout_cannot_run_is_refused_when_the_database_is_built_not_ignored(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        Use(provider, layout);

        // Configured with the layout: refused before any file exists.
        var e = Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.SelectXorInsert = strategy));
        Assert.Equal("BlockDb:SelectXorInsert", e.Setting);
        Assert.Contains(strategy.ToString(), e.Message, StringComparison.Ordinal);
        Assert.False(File.Exists(DbPath));

        // The layout read from an existing file: refused at open, before a session, and the file is left as it was.
        await using (var db = Open())
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Hash(1), 10);
        }

        var before = await File.ReadAllBytesAsync(DbPath);
        var fromFile = Assert.Throws<BlockDbConfigurationException>(() => BlockDatabase.Open(new BlockDbOptions { Provider = Provider, DataSource = DbPath, SelectXorInsert = strategy }));
        Assert.Equal("BlockDb:SelectXorInsert", fromFile.Setting);
        Assert.Equal(before, await File.ReadAllBytesAsync(DbPath));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrixWithStrategies), MemberType = typeof(ConformanceTestBase))]
    public async Task Select_xor_insert_of_a_known_block_counts_no_write_and_holds_no_transaction(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        Use(provider, layout);
        await using var db = Open(o => { o.SelectXorInsert = strategy; o.Batching.CommitEvery = 1; });
        await using var writer = await db.OpenSessionAsync();
        await writer.SelectXorInsertAsync(TestData.Hash(1), 10);
        Assert.Equal(0, writer.PendingWrites);
        Assert.False((await writer.SelectXorInsertAsync(TestData.Hash(1), 10)).Created);
        Assert.Equal(0, writer.PendingWrites);

        // A second writer can take the write lock at once: the first holds no transaction.
        await using var other = await db.OpenSessionAsync();
        Assert.True((await other.SelectXorInsertAsync(TestData.Hash(2), 10)).Created);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_blockset_keeps_its_blocks_in_order_with_repeats_and_its_length_in_bytes(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var keys = new[] { TestData.Block(3, 100), TestData.Block(1, 200), TestData.Block(3, 100), TestData.Block(2, 50) };
        var ids = new List<long>();
        foreach (var key in keys)
        {
            ids.Add((await session.SelectXorInsertAsync(key.Hash, key.Size)).Id);
        }

        var fullHash = TestData.Hash(99);
        var blocksetId = await session.AddBlocksetAsync(keys, fullHash);
        var blocks = await session.ListBlocksetBlocksAsync(blocksetId);

        Assert.Equal([0, 1, 2, 3], blocks.Select(b => b.Index));
        Assert.Equal(ids, blocks.Select(b => b.BlockId));
        Assert.Equal(keys.Select(k => k.Hash), blocks.Select(b => b.Hash));
        Assert.Equal(keys.Select(k => k.Size), blocks.Select(b => b.Size));
        Assert.Equal(new BlocksetInfo(blocksetId, 450, fullHash, 4), await session.GetBlocksetAsync(blocksetId));
        Assert.Equal(new BlockDbCounts(3, 1, 4), await session.GetCountsAsync());
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_blockset_from_block_ids_matches_one_from_hashes(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var a = (await session.SelectXorInsertAsync(TestData.Hash(1), 1000)).Id;
        var b = (await session.SelectXorInsertAsync(TestData.Hash(2), 24)).Id;

        var byIds = await session.AddBlocksetAsync(new[] { b, a, b });
        var byKeys = await session.AddBlocksetAsync(new[] { TestData.Block(2, 24), TestData.Block(1, 1000), TestData.Block(2, 24) });

        Assert.NotEqual(byIds, byKeys);
        Assert.Equal(
            (await session.ListBlocksetBlocksAsync(byKeys)).Select(x => (x.Index, x.BlockId)),
            (await session.ListBlocksetBlocksAsync(byIds)).Select(x => (x.Index, x.BlockId)));
        var info = await session.GetBlocksetAsync(byIds);
        Assert.Equal(1048, info.Length);
        Assert.Null(info.FullHash);
        Assert.Equal(3, info.BlockCount);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_large_blockset_reads_back_in_order(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var keys = Enumerable.Range(0, 3000).Select(i => TestData.Block(i % 1700, 1 + (i % 1700))).ToArray();
        foreach (var key in keys.Distinct())
        {
            await session.SelectXorInsertAsync(key.Hash, key.Size);
        }

        var id = await session.AddBlocksetAsync(keys);
        var blocks = await session.ListBlocksetBlocksAsync(id);
        Assert.Equal(keys.Length, blocks.Count);
        Assert.Equal(keys, blocks.Select(b => new BlockKey(b.Hash, b.Size)));
        Assert.Equal(keys.Sum(k => k.Size), (await session.GetBlocksetAsync(id)).Length);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Bad_blocksets_are_refused_and_write_nothing(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var known = (await session.SelectXorInsertAsync(TestData.Hash(1), 10)).Id;
        var kept = await session.AddBlocksetAsync(new[] { known });

        await Assert.ThrowsAsync<ArgumentNullException>(async () => await session.AddBlocksetAsync((IReadOnlyList<long>)null!));
        var byKey = await Assert.ThrowsAsync<BlockNotFoundException>(async () =>
            await session.AddBlocksetAsync(new[] { TestData.Block(1, 10), TestData.Block(1, 10), TestData.Block(5, 10) }));
        Assert.Equal(2, byKey.Position);
        var byId = await Assert.ThrowsAsync<BlockNotFoundException>(async () => await session.AddBlocksetAsync(new[] { known, known + 1000 }));
        Assert.Equal(1, byId.Position);
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.AddBlocksetAsync(new[] { known }, fullHash: "not base64"));
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.AddBlocksetAsync(new[] { new BlockKey(TestData.Hash(1), 0) }));

        Assert.Equal(new BlockDbCounts(1, 1, 1), await session.GetCountsAsync());
        Assert.Equal(2, session.PendingWrites);
        await session.CommitAsync();
        Assert.Single(await session.ListBlocksetBlocksAsync(kept));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Unknown_blockset_ids_get_a_typed_error(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var e = await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await session.ListBlocksetBlocksAsync(42));
        Assert.Equal(42, e.BlocksetId);
        await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await session.GetBlocksetAsync(-1));
    }

    [Theory]
    [MemberData(nameof(MatrixWithBadHashes), MemberType = typeof(ConformanceTestBase))]
    public async Task Bad_hashes_are_refused_before_anything_is_written(string provider, BlockLayout layout, string hash, Type expected)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var e = await Assert.ThrowsAnyAsync<ArgumentException>(async () => await session.SelectXorInsertAsync(hash, 10));
        Assert.IsType(expected, e);
        Assert.Contains("base64", e.Message, StringComparison.Ordinal);
        await Assert.ThrowsAnyAsync<ArgumentException>(async () => await session.InsertBlockAsync(hash, 10));
        await Assert.ThrowsAnyAsync<ArgumentException>(async () => await session.FindBlockAsync(hash, 10));
        Assert.Equal(0, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Null_hashes_and_sizes_below_one_byte_are_refused(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        await Assert.ThrowsAsync<ArgumentNullException>(async () => await session.SelectXorInsertAsync(null!, 10));
        var negative = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.SelectXorInsertAsync(TestData.Hash(1), -5));
        Assert.Contains("1 or more", negative.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.InsertBlockAsync(TestData.Hash(1), 0));
        Assert.Equal(0, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Hashes_of_other_lengths_and_padding_are_accepted(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        Assert.True((await session.SelectXorInsertAsync("AAAA", 1)).Created);
        Assert.True((await session.SelectXorInsertAsync("AA==", 1)).Created);
        Assert.True((await session.SelectXorInsertAsync(Convert.ToBase64String(new byte[64]), 1)).Created);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_batch_of_n_writes_commits_exactly_at_the_nth_and_is_invisible_to_another_connection_before(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 3);
        await using var writer = await db.OpenSessionAsync();
        await using var reader = await db.OpenSessionAsync();

        await writer.InsertBlockAsync(TestData.Hash(1), 1);
        await writer.SelectXorInsertAsync(TestData.Hash(2), 1);
        Assert.Equal(2, writer.PendingWrites);
        Assert.Equal(2, (await writer.GetCountsAsync()).Blocks);
        Assert.Equal(0, (await reader.GetCountsAsync()).Blocks);
        Assert.Null(await reader.FindBlockAsync(TestData.Hash(1), 1));

        await writer.AddBlocksetAsync(new[] { TestData.Block(1, 1), TestData.Block(2, 1) });
        Assert.Equal(0, writer.PendingWrites);
        Assert.Equal(new BlockDbCounts(2, 1, 2), await reader.GetCountsAsync());

        await writer.InsertBlockAsync(TestData.Hash(3), 1);
        Assert.Equal(1, writer.PendingWrites);
        Assert.Equal(2, (await reader.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Commit_every_one_makes_each_write_visible_at_once(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var writer = await db.OpenSessionAsync();
        await using var reader = await db.OpenSessionAsync();
        var id = await writer.InsertBlockAsync(TestData.Hash(1), 1);
        Assert.Equal(0, writer.PendingWrites);
        Assert.Equal(id, await reader.FindBlockAsync(TestData.Hash(1), 1));
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
            await writer.SelectXorInsertAsync(TestData.Hash(i), 1);
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
        await writer.InsertBlockAsync(TestData.Hash(1), 1);
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
        await writer.InsertBlockAsync(TestData.Hash(2), 1);
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
        await session.InsertBlockAsync(TestData.Hash(1), 1);
        await session.CommitAsync();
        await session.InsertBlockAsync(TestData.Hash(2), 1);
        await session.RollbackAsync();
        Assert.Equal(0, session.PendingWrites);
        Assert.Equal(1, (await session.GetCountsAsync()).Blocks);
        Assert.True((await session.SelectXorInsertAsync(TestData.Hash(2), 1)).Created);
    }

    [Theory]
    [MemberData(nameof(MatrixWithDisposeBehaviors), MemberType = typeof(ConformanceTestBase))]
    public async Task Disposing_a_session_ends_its_open_batch_as_configured(string provider, BlockLayout layout, DisposeBehavior onDispose, long expectedBlocks)
    {
        Use(provider, layout);
        await using (var db = Open(o => { o.Batching.CommitEvery = 0; o.Batching.OnDispose = onDispose; }))
        {
            await using (var session = await db.OpenSessionAsync())
            {
                await session.InsertBlockAsync(TestData.Hash(1), 1);
                await session.CommitAsync();
                await session.InsertBlockAsync(TestData.Hash(2), 1);
                await session.InsertBlockAsync(TestData.Hash(3), 1);
            }
        }

        await using var reopened = Open();
        await using var check = await reopened.OpenSessionAsync();
        Assert.Equal(expectedBlocks, (await check.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Disposing_the_database_disposes_open_sessions_and_releases_the_file(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var db = Open(o => o.Batching.CommitEvery = 0);
        var session = await db.OpenSessionAsync();
        await session.InsertBlockAsync(TestData.Hash(1), 1);
        await db.DisposeAsync();

        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await session.FindBlockAsync(TestData.Hash(1), 1));
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await db.OpenSessionAsync());

        // Released: the file (or the server's tables) can be deleted and a new index created in its place.
        DeleteIndex();
        await using var fresh = Open();
        await using var s = await fresh.OpenSessionAsync();
        Assert.Equal(0, (await s.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Cancellation_before_a_call_writes_nothing(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        using var cts = new CancellationTokenSource();
        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await session.SelectXorInsertAsync(TestData.Hash(1), 1, cts.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await db.OpenSessionAsync(cts.Token));
        Assert.Equal(0, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Cancellation_in_the_middle_of_a_blockset_writes_none_of_it(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var id = (await session.SelectXorInsertAsync(TestData.Hash(1), 1)).Id;
        using var cts = new CancellationTokenSource();
        var ids = new CancellingList<long>(Enumerable.Repeat(id, 2000).ToArray(), cancelAt: 700, cts);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await session.AddBlocksetAsync(ids, null, cts.Token));
        await session.CommitAsync();
        Assert.Equal(new BlockDbCounts(1, 0, 0), await session.GetCountsAsync());
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_session_refuses_a_second_call_while_one_is_running(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var id = (await session.SelectXorInsertAsync(TestData.Hash(1), 1)).Id;
        Exception? reentrant = null;
        var ids = new CallbackList<long>([id, id], () =>
        {
            var pending = session.FindBlockAsync(TestData.Hash(1), 1);
            reentrant = pending.IsFaulted ? pending.AsTask().Exception!.InnerException : null;
        });
        await session.AddBlocksetAsync(ids);
        Assert.IsType<InvalidOperationException>(reentrant);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_read_only_database_opens_beside_a_writer_reads_committed_blocks_and_refuses_every_write(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        long blockset;
        await using (var db = Open())
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Hash(1), 10);
            blockset = await session.AddBlocksetAsync(new[] { TestData.Block(1, 10) });
        }

        await using var writing = Open(o => o.Batching.CommitEvery = 0);
        await using var writer = await writing.OpenSessionAsync();
        await writer.SelectXorInsertAsync(TestData.Hash(2), 10); // uncommitted: the writer holds the write lock

        await using var db2 = Open(o => { o.ReadOnly = true; BusyTimeout(o, 200); });
        await using var reader = await db2.OpenSessionAsync();
        Assert.Equal(1, await reader.FindBlockAsync(TestData.Hash(1), 10));
        Assert.Null(await reader.FindBlockAsync(TestData.Hash(2), 10));
        Assert.Single(await reader.ListBlocksetBlocksAsync(blockset));
        foreach (var write in new Func<Task>[]
        {
            async () => await reader.SelectXorInsertAsync(TestData.Hash(1), 10),
            async () => await reader.SelectXorInsertAsync(TestData.Hash(3), 10),
            async () => await reader.InsertBlockAsync(TestData.Hash(3), 10),
            async () => await reader.AddBlocksetAsync(new[] { TestData.Block(1, 10) }),
            async () => await reader.AddBlocksetAsync(new[] { 1L }),
        })
        {
            var e = await Assert.ThrowsAsync<BlockDbReadOnlyException>(write);
            AssertReadOnlyCode(e);
        }

        await reader.CommitAsync();
        await using (var shared = db2.OpenSharedRepository())
        {
            Assert.Equal(1, await shared.FindBlockAsync(TestData.Hash(1), 10));
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(() => shared.SelectXorInsertAsync(TestData.Hash(1), 10).AsTask());
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(() => shared.SelectXorInsertAsync(TestData.Hash(4), 10).AsTask());
        }

        await writer.CommitAsync();
        Assert.Equal(new BlockDbCounts(2, 1, 1), await reader.GetCountsAsync());
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_read_only_open_never_creates_a_file_nor_changes_its_journal_mode(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var missing = Assert.Throws<BlockDbException>(() => Open(o => o.ReadOnly = true));
        Assert.Equal(SqliteResultCode.CantOpen, missing.SqliteErrorCode);
        Assert.False(File.Exists(DbPath));

        await using (Open())
        {
        }

        var journal = Assert.Throws<BlockDbConfigurationException>(() => Open(o => { o.ReadOnly = true; o.Pragmas.Preset = PragmaPreset.SqliteDefaults; }));
        Assert.Equal("BlockDb:Pragmas:JournalMode", journal.Setting);
        Assert.Contains("Wal", journal.Message, StringComparison.Ordinal);
        await using var db = Open(o => { o.ReadOnly = true; o.Pragmas.Preset = PragmaPreset.SqliteDefaults; o.Pragmas.JournalMode = JournalMode.Wal; });
        Assert.Equal(JournalMode.Wal, db.AppliedPragmas.JournalMode);
        Assert.Equal(Layout, db.Layout);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Recommended_pragmas_are_applied_and_read_back(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Pragmas.Preset = PragmaPreset.Recommended);
        await using var session = await db.OpenSessionAsync();
        Assert.Equal(PragmaSettings.Recommended, session.AppliedPragmas);
        Assert.Equal(PragmaSettings.Recommended, db.AppliedPragmas);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_sqlite_defaults_preset_really_leaves_wal(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using (var wal = Open(o => o.Pragmas.Preset = PragmaPreset.Recommended))
        {
            Assert.Equal(JournalMode.Wal, wal.AppliedPragmas.JournalMode);
        }

        await using (var none = Open(o => o.Pragmas.Preset = PragmaPreset.None))
        {
            // WAL persists in the file: a run "without pragmas" would still be in WAL (the seed's fault 7).
            Assert.Equal(JournalMode.Wal, none.AppliedPragmas.JournalMode);
        }

        await using var defaults = Open(o => o.Pragmas.Preset = PragmaPreset.SqliteDefaults);
        await using var session = await defaults.OpenSessionAsync();
        Assert.Equal(PragmaSettings.SqliteDefaults, session.AppliedPragmas);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Single_pragmas_override_the_preset(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o =>
        {
            o.Pragmas.Preset = PragmaPreset.SqliteDefaults;
            o.Pragmas.JournalMode = JournalMode.Truncate;
            o.Pragmas.CacheSize = 5000;
            o.Pragmas.BusyTimeout = 250;
        });
        await using var session = await db.OpenSessionAsync();
        Assert.Equal(PragmaSettings.SqliteDefaults with { JournalMode = JournalMode.Truncate, CacheSize = 5000, BusyTimeout = 250 }, session.AppliedPragmas);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public void A_path_in_a_missing_folder_fails_with_cantopen(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var e = Assert.Throws<BlockDbException>(() => BlockDatabase.Open(Options(o => o.DataSource = Path.Combine(DbPath + ".missing", "x.db"))));
        Assert.Equal(SqliteResultCode.CantOpen, e.SqliteErrorCode);
        Assert.Contains("does not exist", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public void A_path_in_a_read_only_folder_fails_with_sqlites_code(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        // /proc refuses new files even to root, so this holds whoever runs the tests.
        var e = Assert.Throws<BlockDbException>(() => BlockDatabase.Open(Options(o => o.DataSource = "/proc/blockdb-test.db")));
        Assert.Equal(SqliteResultCode.CantOpen, e.SqliteErrorCode);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public void A_file_that_is_not_a_database_fails_with_notadb_and_is_left_untouched(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var bytes = new byte[8192];
        new Random(5).NextBytes(bytes);
        File.WriteAllBytes(DbPath, bytes);
        var e = Assert.Throws<BlockDbException>(() => Open());
        Assert.Equal(SqliteResultCode.NotADatabase, e.SqliteErrorCode);
        Assert.Contains("not a SQLite database", e.Message, StringComparison.Ordinal);
        Assert.Equal(bytes, File.ReadAllBytes(DbPath));
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public void Another_applications_database_is_refused_and_left_untouched(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        using (var raw = BlockDbProviders.Get(Provider).Open(new SqliteOpenOptions(DbPath, SqliteOpenMode.ReadWriteCreate)))
        {
            raw.Execute("CREATE TABLE Notes (Text TEXT)");
        }

        var before = File.ReadAllBytes(DbPath);
        Assert.Throws<BlockDbFormatException>(() => Open(o => o.Pragmas.Preset = PragmaPreset.None));
        Assert.Equal(before, File.ReadAllBytes(DbPath));
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_database_from_a_newer_blockdb_is_refused(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using (var db = Open(o => o.Pragmas.Preset = PragmaPreset.SqliteDefaults))
        {
        }

        using (var raw = BlockDbProviders.Get(Provider).Open(new SqliteOpenOptions(DbPath, SqliteOpenMode.ReadWrite)))
        {
            raw.Execute($"PRAGMA user_version = {SchemaVersions.Current + 1}");
        }

        var e = Assert.Throws<BlockDbFormatException>(() => Open());
        Assert.Contains("newer", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public void Invalid_options_name_the_setting_and_what_is_allowed(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var unknown = Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Provider = "Oracle"));
        Assert.Equal("BlockDb:Provider", unknown.Setting);
        Assert.Contains("MicrosoftData, SystemData, PInvoke", unknown.Message, StringComparison.Ordinal);

        var busy = Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Pragmas.BusyTimeout = -1));
        Assert.Equal("BlockDb:Pragmas:BusyTimeout", busy.Setting);
        Assert.Contains("0 to 3600000", busy.Message, StringComparison.Ordinal);

        var journal = Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Pragmas.JournalMode = (JournalMode)42));
        Assert.Contains("Delete, Truncate, Persist, Memory, Wal, Off", journal.Message, StringComparison.Ordinal);

        Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Pragmas.MmapSize = -1));
        Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Batching.CommitEvery = -1));
        Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.DataSource = " "));
        Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.DataSource = ":memory:"));
        Assert.False(File.Exists(DbPath));
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Page_cache_counters_count_reads_where_the_provider_exposes_them(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        await session.InsertBlockAsync(TestData.Hash(1), 10);
        await session.CommitAsync();
        var before = session.ReadCacheStats();
        if (Provider == "SystemData")
        {
            Assert.Null(before); // System.Data.SQLite does not expose its sqlite3* handle (nor sqlite3_db_status)
            return;
        }

        for (var i = 0; i < 100; i++)
        {
            Assert.NotNull(await session.FindBlockAsync(TestData.Hash(1), 10));
        }

        var reads = session.ReadCacheStats()!.Value.Since(before!.Value);
        Assert.InRange(reads.Hits, 100, 100_000);
        Assert.Equal(0, reads.Writes);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_native_sqlite_version_is_reported(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        Assert.Matches(@"^3\.\d+\.\d+$", db.SqliteVersion);
        Assert.Equal(BlockDbProviders.Get(Provider).NativeLibraryVersion, db.SqliteVersion);
    }
}
