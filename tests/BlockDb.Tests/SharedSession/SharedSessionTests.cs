namespace BlockDb.Tests.SharedSession;

/// <summary>The shared session: many concurrent tasks, one group-commit writer, pooled readers; every call a session has, volumes and collection included.</summary>
public sealed class SharedSessionTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Concurrent_select_xor_insert_gives_one_id_per_block_and_groups_commits(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var shared = db.OpenSharedSession();
        const int tasks = 200;
        const int distinct = 300;
        var results = await Task.WhenAll(Enumerable.Range(0, tasks).Select(t => Task.Run(async () =>
        {
            var seen = new List<(int Key, SelectXorInsertResult Result)>();
            for (var i = 0; i < 20; i++)
            {
                var key = ((t * 7) + (i * 13)) % distinct;
                seen.Add((key, await shared.SelectXorInsertAsync(TestData.Block(key, 4096))));
            }

            return seen;
        })));

        var all = results.SelectMany(r => r).ToList();
        var idsPerKey = all.GroupBy(x => x.Key).ToDictionary(g => g.Key, g => g.Select(x => x.Result.Id).Distinct().ToList());
        Assert.All(idsPerKey.Values, ids => Assert.Single(ids));
        Assert.Equal(idsPerKey.Count, all.Count(x => x.Result.Created));
        Assert.Equal(idsPerKey.Count, (await shared.GetCountsAsync()).Blocks);
        if (!IsServer)
        {
            // SQLite's one writer groups commits; a server's shared session commits each write on its own connection.
            Assert.True(shared.CommittedBatches < shared.AcknowledgedWrites, $"{shared.CommittedBatches} commits for {shared.AcknowledgedWrites} writes: no grouping");
        }
        else
        {
            Assert.Equal(idsPerKey.Count, shared.AcknowledgedWrites);
        }

        foreach (var (key, ids) in idsPerKey)
        {
            Assert.Equal(ids[0], await shared.FindBlockAsync(TestData.Block(key, 4096)));
        }
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Concurrent_blocksets_are_complete_and_visible_once_acknowledged(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var shared = db.OpenSharedSession();
        var written = await Task.WhenAll(Enumerable.Range(0, 100).Select(f => Task.Run(async () =>
        {
            var blocks = Enumerable.Range(0, 1 + (f % 9)).Select(i => TestData.Block((f * 5) + i, 100 + i)).ToArray();
            var ids = new List<long>();
            foreach (var block in blocks)
            {
                ids.Add((await shared.SelectXorInsertAsync(block)).Id);
            }

            var id = f % 2 == 0 ? await shared.AddBlocksetAsync(blocks) : await shared.AddBlocksetAsync(ids);

            // Acknowledged means committed: a reader connection sees it at once.
            Assert.Equal(blocks.Length, (await shared.GetBlocksetAsync(id)).BlockCount);
            return (id, blocks);
        })));

        foreach (var (id, blocks) in written)
        {
            Assert.Equal(blocks, (await shared.ListBlocksetBlocksAsync(id)).Select(b => b.Block));
        }

        Assert.Equal(written.Sum(w => w.blocks.Length), (await shared.GetCountsAsync()).BlocksetEntries);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_failed_write_fails_only_its_own_call(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => BusyTimeout(o, 500));
        await using var shared = db.OpenSharedSession();
        await shared.SelectXorInsertAsync(TestData.Block(0, 1));

        // Two of the writes are new blocks for a volume that does not exist: refused inside the group's transaction.
        const long missingVolume = 1_000_000;
        var calls = Enumerable.Range(0, 50).Select(i => (i % 25 == 0
            ? shared.SelectXorInsertAsync(TestData.Block(1000 + i, 1), missingVolume)
            : shared.SelectXorInsertAsync(TestData.Block(i, 1))).AsTask()).ToArray();
        var outcomes = await Task.WhenAll(calls.Select(async c =>
        {
            try
            {
                await c;
                return 0;
            }
            catch (VolumeNotFoundException)
            {
                return 1;
            }
            catch (BlockDbException)
            {
                return 2;
            }
        }));

        Assert.Equal(2, outcomes.Count(code => code == 1));
        Assert.Equal(48, outcomes.Count(code => code == 0));
        Assert.Equal(49, (await shared.GetCountsAsync()).Blocks);

        // A round in which every write failed still ends its transaction: the write lock is free for others.
        await Assert.ThrowsAsync<VolumeNotFoundException>(() => shared.SelectXorInsertAsync(TestData.Block(2000, 1), missingVolume).AsTask());
        await using var other = await db.OpenSessionAsync();
        await other.SelectXorInsertAsync(TestData.Block(-7, 1));
        await other.CommitAsync();
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Disposing_the_shared_session_commits_the_queued_writes_and_refuses_new_ones(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        Task<SelectXorInsertResult>[] pending;
        await using (var db = Open())
        {
            var shared = db.OpenSharedSession();
            pending = Enumerable.Range(0, 500).Select(i => shared.SelectXorInsertAsync(TestData.Block(i, 1)).AsTask()).ToArray();
            await shared.DisposeAsync();

            // Every write queued before dispose was committed and acknowledged; none failed.
            await Task.WhenAll(pending).WaitAsync(TimeSpan.FromSeconds(30));
            await Assert.ThrowsAsync<ObjectDisposedException>(() => shared.SelectXorInsertAsync(TestData.Block(-1, 1)).AsTask());
            await Assert.ThrowsAsync<ObjectDisposedException>(async () => await shared.FindBlockAsync(TestData.Block(1, 1)));
        }

        await using var reopened = Open();
        await using var session = await reopened.OpenSessionAsync();
        Assert.Equal(500, (await session.GetCountsAsync()).Blocks);
        Assert.Equal(pending.Select(t => t.Result.Id).Order(), Enumerable.Range(1, 500).Select(i => (long)i));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_cancelled_shared_write_writes_nothing(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var shared = db.OpenSharedSession();
        using var cts = new CancellationTokenSource();
        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => shared.SelectXorInsertAsync(TestData.Block(1, 1), cancellationToken: cts.Token).AsTask());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => shared.SelectXorInsertAsync(TestData.Block(2, 1), cancellationToken: cts.Token).AsTask());
        Assert.Equal(0, (await shared.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Shared_session_bad_input_is_refused_before_queueing(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var shared = db.OpenSharedSession();
        await Assert.ThrowsAnyAsync<ArgumentException>(() => shared.SelectXorInsertAsync(BlockKey.Parse("bad hash", 1)).AsTask());
        await Assert.ThrowsAnyAsync<ArgumentException>(() => shared.SelectXorInsertAsync(TestData.Block(1, -1)).AsTask());
        await Assert.ThrowsAnyAsync<ArgumentException>(() => shared.AddBlocksetAsync(new[] { TestData.Block(1, 1), default }, new SelectXorInsertResult[2]).AsTask());
        await Assert.ThrowsAnyAsync<ArgumentException>(() => shared.AddBlocksetAsync(new[] { TestData.Block(1, 1) }, Memory<SelectXorInsertResult>.Empty).AsTask());
        Assert.Equal(new BlockDbCounts(0, 0, 0), await shared.GetCountsAsync());
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_shared_session_runs_the_volume_and_collection_calls_and_acknowledges_them_once_committed(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var shared = db.OpenSharedSession();
        var volume = await shared.RegisterVolumeAsync("v");
        var blocks = await Task.WhenAll(Enumerable.Range(0, 20).Select(i => shared.SelectXorInsertAsync(TestData.Block(i, 10), volume).AsTask()));
        var blockset = await shared.AddBlocksetAsync([.. blocks.Take(5).Select(b => b.Id)]);
        await shared.DeleteBlocksetAsync(blockset);
        Assert.Equal(20, (await shared.GetVolumeAsync(volume)).UnreferencedBlocks);
        Assert.Equal(volume, (await shared.FindVolumeAsync("v"))?.Id);
        Assert.Equal(volume, (await shared.GetBlockAsync(blocks[0].Id)).VolumeId);
        Assert.Equal(20, (await shared.DeleteUnreferencedBlocksAsync(volume)).Blocks);
        await shared.SetVolumeStateAsync(volume, VolumeState.Deleting);
        await shared.SetVolumeStateAsync(volume, VolumeState.Deleted);
        Assert.Equal(0, await shared.MoveBlocksAsync([], (await shared.RegisterVolumeAsync("w"))));
        Assert.Null(await shared.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(1)), 0));
        Assert.Equal(new BlockDbCounts(0, 0, 0), await shared.GetCountsAsync());
    }
}
