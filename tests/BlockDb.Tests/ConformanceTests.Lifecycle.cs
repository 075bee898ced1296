namespace BlockDb.Tests;

/// <summary>
/// The lifecycle of a backup engine, for every provider and layout, PostgreSQL included (<see cref="ConformanceTestBase.ProviderMatrix"/>): volumes,
/// blockset deletion, garbage collection, enumeration, blockset reuse and empty files.
/// </summary>
public sealed class LifecycleConformanceTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Volumes_are_registered_found_and_move_through_their_states_forward_only(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        var a = await session.RegisterVolumeAsync("b-0001.zip");
        var b = await session.RegisterVolumeAsync("b-0002.zip", VolumeState.Uploaded);
        Assert.NotEqual(a, b);
        Assert.Equal(new VolumeInfo(a, "b-0001.zip", VolumeState.Temporary, null, 0, 0, 0, 0), await session.GetVolumeAsync(a));
        Assert.Equal(b, (await session.FindVolumeAsync("b-0002.zip"))?.Id);
        Assert.Null(await session.FindVolumeAsync("nope.zip"));

        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.RegisterVolumeAsync("b-0001.zip"));
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.RegisterVolumeAsync(string.Empty));
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.RegisterVolumeAsync(new string('x', 1025)));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.RegisterVolumeAsync("c.zip", (VolumeState)42));
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.GetVolumeAsync(999));
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.SetVolumeStateAsync(999, VolumeState.Uploaded));

        await session.SetVolumeStateAsync(a, VolumeState.Uploading);
        await session.SetVolumeStateAsync(a, VolumeState.Verified, size: 52_428_800);
        Assert.Equal((VolumeState.Verified, (long?)52_428_800), ((await session.GetVolumeAsync(a)).State, (await session.GetVolumeAsync(a)).Size));
        var back = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SetVolumeStateAsync(a, VolumeState.Temporary));
        Assert.Contains("cannot go from Verified to Temporary", back.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SetVolumeStateAsync(a, VolumeState.Deleted));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.SetVolumeStateAsync(a, VolumeState.Verified, size: -1));
        Assert.Equal(VolumeState.Verified, (await session.GetVolumeAsync(a)).State);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task New_blocks_are_recorded_in_their_volume_and_a_known_block_keeps_its_own(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var first = await session.RegisterVolumeAsync("b-0001.zip");
        var second = await session.RegisterVolumeAsync("b-0002.zip");
        var x = await session.SelectXorInsertAsync(TestData.Hash(1), 100, first);
        var y = await session.InsertBlockAsync(TestData.Hash(2), 200, first);
        var again = await session.SelectXorInsertAsync(TestData.Hash(1), 100, second);
        var none = await session.SelectXorInsertAsync(TestData.Hash(3), 300);
        await session.CommitAsync();

        Assert.Equal(new SelectXorInsertResult(x.Id, false), again);
        Assert.Equal(new BlockInfo(x.Id, TestData.Hash(1), 100, first), await session.GetBlockAsync(x.Id));
        Assert.Equal(first, (await session.GetBlockAsync(y)).VolumeId);
        Assert.Null((await session.GetBlockAsync(none.Id)).VolumeId);
        Assert.Equal(new VolumeInfo(first, "b-0001.zip", VolumeState.Temporary, null, 2, 300, 2, 300), await session.GetVolumeAsync(first));
        await Assert.ThrowsAsync<BlockNotFoundException>(async () => await session.GetBlockAsync(12345));

        // Unknown or deleted volumes receive nothing, and the batch keeps what it had.
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.SelectXorInsertAsync(TestData.Hash(4), 10, 999));
        await session.SetVolumeStateAsync(second, VolumeState.Deleting);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SelectXorInsertAsync(TestData.Hash(4), 10, second));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.InsertBlockAsync(TestData.Hash(4), 10, second));
        await session.CommitAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Hash(4), 10));
        Assert.Equal(3, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Deleting_blocksets_and_collecting_frees_only_unreferenced_blocks_and_a_readded_block_gets_one_row(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        var v1 = await session.RegisterVolumeAsync("v1");
        var v2 = await session.RegisterVolumeAsync("v2");
        var shared = (await session.SelectXorInsertAsync(TestData.Hash(1), 100, v1)).Id;
        var onlyA = (await session.SelectXorInsertAsync(TestData.Hash(2), 200, v1)).Id;
        var onlyB = (await session.SelectXorInsertAsync(TestData.Hash(3), 300, v2)).Id;
        var a = await session.AddBlocksetAsync([shared, onlyA]);
        var b = await session.AddBlocksetAsync([shared, onlyB]);

        await session.DeleteBlocksetAsync(a);
        await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await session.DeleteBlocksetAsync(a));
        await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await session.GetBlocksetAsync(a));
        Assert.Equal(new BlockDbCounts(3, 1, 2), await session.GetCountsAsync());

        // The waste that decides compaction: v1 holds one unreferenced block of 200 bytes.
        var before = await session.GetVolumeAsync(v1);
        Assert.Equal((2L, 300L, 1L, 200L), (before.Blocks, before.BlockBytes, before.UnreferencedBlocks, before.UnreferencedBytes));
        var garbage = new List<BlockInfo>();
        await foreach (var block in db.EnumerateBlocksAsync(new BlockFilter { UnreferencedOnly = true }))
        {
            garbage.Add(block);
        }

        Assert.Equal([new BlockInfo(onlyA, TestData.Hash(2), 200, v1)], garbage);

        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.DeleteUnreferencedBlocksAsync(999));
        var nothing = await session.DeleteUnreferencedBlocksAsync(v2);
        Assert.Equal((0L, 0L, 0), (nothing.Blocks, nothing.Bytes, nothing.ByVolume.Count));
        var collected = await session.DeleteUnreferencedBlocksAsync();
        Assert.Equal((1L, 200L), (collected.Blocks, collected.Bytes));
        Assert.Equal([new VolumeCollected(v1, 1, 200)], collected.ByVolume);
        Assert.Null(await session.FindBlockAsync(TestData.Hash(2), 200));
        Assert.Equal([shared, onlyB], (await session.ListBlocksetBlocksAsync(b)).Select(x => x.BlockId));

        // Re-added after collection: one new row, found by every session and another database.
        var readded = await session.SelectXorInsertAsync(TestData.Hash(2), 200, v2);
        Assert.True(readded.Created);
        await using var other = Open();
        await using var otherSession = await other.OpenSessionAsync();
        Assert.Equal(new SelectXorInsertResult(readded.Id, false), await otherSession.SelectXorInsertAsync(TestData.Hash(2), 200));
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
        Assert.Equal(3, check.Counts.Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_volume_is_deleted_only_once_its_blocks_are_moved_or_collected(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        var old = await session.RegisterVolumeAsync("old", VolumeState.Verified);
        var fresh = await session.RegisterVolumeAsync("compacted");
        var live = (await session.SelectXorInsertAsync(TestData.Hash(1), 10, old)).Id;
        var dead = (await session.SelectXorInsertAsync(TestData.Hash(2), 10, old)).Id;
        await session.AddBlocksetAsync([live]);

        var refused = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SetVolumeStateAsync(old, VolumeState.Deleting));
        Assert.Contains("still holds blocks that blocksets reference", refused.Message, StringComparison.Ordinal);

        // Compaction: the live block moves to a new volume; a list naming an unknown block moves nothing.
        var unknown = await Assert.ThrowsAsync<BlockNotFoundException>(async () => await session.MoveBlocksAsync([live, 9999], fresh));
        Assert.Equal(1, unknown.Position);
        Assert.Equal(old, (await session.GetBlockAsync(live)).VolumeId);
        Assert.Equal(1, await session.MoveBlocksAsync([live], fresh));
        Assert.Equal(fresh, (await session.GetBlockAsync(live)).VolumeId);

        await session.SetVolumeStateAsync(old, VolumeState.Deleting);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.MoveBlocksAsync([live], old));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync([dead]));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync([TestData.Block(2, 10)]));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SetVolumeStateAsync(old, VolumeState.Deleted));
        Assert.Equal(1, (await session.DeleteUnreferencedBlocksAsync(old)).Blocks);
        await session.SetVolumeStateAsync(old, VolumeState.Deleted);
        await Assert.ThrowsAsync<BlockNotFoundException>(async () => await session.GetBlockAsync(dead));
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task An_empty_file_is_a_blockset_of_length_zero_and_an_unchanged_file_finds_its_blockset(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        var emptyHash = TestData.Hash(-1);
        var empty = await session.AddBlocksetAsync(Array.Empty<BlockKey>(), emptyHash);
        var emptyById = await session.AddBlocksetAsync(Array.Empty<long>());
        Assert.Equal(new BlocksetInfo(empty, 0, emptyHash, 0), await session.GetBlocksetAsync(empty));
        Assert.Empty(await session.ListBlocksetBlocksAsync(empty));
        Assert.Empty(await session.ListBlocksetBlocksAsync(emptyById));
        Assert.Equal(empty, await session.FindBlocksetAsync(emptyHash, 0));

        var block = await session.SelectXorInsertAsync(TestData.Hash(1), 4096);
        var file = await session.AddBlocksetAsync([block.Id], TestData.Hash(100));
        await session.AddBlocksetAsync([block.Id], TestData.Hash(100)); // the same content again: the first is found
        Assert.Equal(file, await session.FindBlocksetAsync(TestData.Hash(100), 4096));
        Assert.Null(await session.FindBlocksetAsync(TestData.Hash(100), 4095));
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.FindBlocksetAsync("not base64", 0));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.FindBlocksetAsync(emptyHash, -1));
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Enumerations_stream_one_snapshot_beside_a_writer_and_honour_cancellation(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var writer = await db.OpenSessionAsync();
        var volume = await writer.RegisterVolumeAsync("v");
        for (var i = 0; i < 50; i++)
        {
            if (i % 2 == 0)
            {
                await writer.SelectXorInsertAsync(TestData.Hash(i), 10 + i, volume);
            }
            else
            {
                await writer.SelectXorInsertAsync(TestData.Hash(i), 10 + i);
            }
        }

        var blockset = await writer.AddBlocksetAsync([TestData.Block(0, 10), TestData.Block(1, 11)], TestData.Hash(77));
        await writer.CommitAsync();

        // An open batch of the writer is not seen; rows committed after the enumeration began are not either.
        await writer.SelectXorInsertAsync(TestData.Hash(1000), 1);
        var seen = new List<BlockInfo>();
        await foreach (var block in db.EnumerateBlocksAsync())
        {
            seen.Add(block);
            if (seen.Count == 1)
            {
                await writer.CommitAsync();
            }
        }

        Assert.Equal(50, seen.Count);
        Assert.Equal(seen.OrderBy(b => b.Id), seen);
        Assert.All(seen, b => Assert.Equal(TestData.Hash((int)(b.Size - 10)), b.Hash));

        var inVolume = await Collect(db.EnumerateBlocksAsync(new BlockFilter { VolumeId = volume }));
        Assert.Equal(25, inVolume.Count);
        Assert.All(inVolume, b => Assert.Equal(volume, b.VolumeId));
        Assert.Equal([new BlocksetInfo(blockset, 21, TestData.Hash(77), 2)], await Collect(db.EnumerateBlocksetsAsync()));
        Assert.Equal([new VolumeInfo(volume, "v", VolumeState.Temporary, null, 25, 25 * 34, 24, (25 * 34) - 10)], await Collect(db.EnumerateVolumesAsync()));

        using var cts = new CancellationTokenSource();
        var cancelled = await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
        {
            await foreach (var block in db.EnumerateBlocksAsync(cancellationToken: cts.Token))
            {
                await cts.CancelAsync();
            }
        });
        Assert.Equal(cts.Token, cancelled.CancellationToken);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Disposing_the_database_closes_an_open_enumeration(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var db = Open();
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Hash(1), 1);
            await session.SelectXorInsertAsync(TestData.Hash(2), 1);
        }

        var enumerator = db.EnumerateBlocksAsync().GetAsyncEnumerator();
        Assert.True(await enumerator.MoveNextAsync());
        await db.DisposeAsync();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await enumerator.MoveNextAsync());
        await enumerator.DisposeAsync();
        if (!IsServer)
        {
            File.Delete(DbPath); // released
        }

        Assert.Throws<ObjectDisposedException>(() => db.EnumerateBlocksAsync().GetAsyncEnumerator());
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_shared_repository_runs_the_lifecycle_calls_and_acknowledges_them_once_committed(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var shared = db.OpenSharedRepository();
        var volume = await shared.RegisterVolumeAsync("v");
        var blocks = await Task.WhenAll(Enumerable.Range(0, 20).Select(i => shared.SelectXorInsertAsync(TestData.Hash(i), 10, volume).AsTask()));
        var blockset = await shared.AddBlocksetAsync([.. blocks.Take(5).Select(b => b.Id)]);
        await shared.DeleteBlocksetAsync(blockset);
        Assert.Equal(20, (await shared.GetVolumeAsync(volume)).UnreferencedBlocks);
        Assert.Equal(volume, (await shared.FindVolumeAsync("v"))?.Id);
        Assert.Equal(volume, (await shared.GetBlockAsync(blocks[0].Id)).VolumeId);
        Assert.Equal(20, (await shared.DeleteUnreferencedBlocksAsync(volume)).Blocks);
        await shared.SetVolumeStateAsync(volume, VolumeState.Deleting);
        await shared.SetVolumeStateAsync(volume, VolumeState.Deleted);
        Assert.Equal(0, await shared.MoveBlocksAsync([], (await shared.RegisterVolumeAsync("w"))));
        Assert.Null(await shared.FindBlocksetAsync(TestData.Hash(1), 0));
        Assert.Equal(new BlockDbCounts(0, 0, 0), await shared.GetCountsAsync());
    }

    private static async Task<List<T>> Collect<T>(IAsyncEnumerable<T> items)
    {
        var list = new List<T>();
        await foreach (var item in items)
        {
            list.Add(item);
        }

        return list;
    }
}
