namespace BlockDb.Tests.Blocksets;

/// <summary>
/// Adding and reading blocksets, for every provider and layout, PostgreSQL included: blocks kept in order with repeats
/// and the length in bytes, from IDs or from hashes, large ones, an empty file; bad or unknown ones refused with a
/// typed error, and a cancelled one writing none of itself.
/// </summary>
public sealed class AddBlocksetTests : ConformanceTestBase
{
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
            ids.Add((await session.SelectXorInsertAsync(key)).Id);
        }

        var fullHash = TestData.Hash(99);
        var blocksetId = await session.AddBlocksetAsync(keys, fullHash);
        var blocks = await session.ListBlocksetBlocksAsync(blocksetId);

        Assert.Equal([0, 1, 2, 3], blocks.Select(b => b.Index));
        Assert.Equal(ids, blocks.Select(b => b.BlockId));
        Assert.Equal(keys, blocks.Select(b => b.Block));
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
        var a = (await session.SelectXorInsertAsync(TestData.Block(1, 1000))).Id;
        var b = (await session.SelectXorInsertAsync(TestData.Block(2, 24))).Id;

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
            await session.SelectXorInsertAsync(key);
        }

        var id = await session.AddBlocksetAsync(keys);
        var blocks = await session.ListBlocksetBlocksAsync(id);
        Assert.Equal(keys.Length, blocks.Count);
        Assert.Equal(keys, blocks.Select(b => b.Block));
        Assert.Equal(keys.Sum(k => k.Size), (await session.GetBlocksetAsync(id)).Length);
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
        Assert.Equal(empty, await session.FindBlocksetAsync(BlockHash.Parse(emptyHash), 0));

        var block = await session.SelectXorInsertAsync(TestData.Block(1, 4096));
        var file = await session.AddBlocksetAsync([block.Id], TestData.Hash(100));
        await session.AddBlocksetAsync([block.Id], TestData.Hash(100)); // the same content again: the first is found
        Assert.Equal(file, await session.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(100)), 4096));
        Assert.Null(await session.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(100)), 4095));
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.FindBlocksetAsync(BlockHash.Parse("not base64"), 0));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.FindBlocksetAsync(BlockHash.Parse(emptyHash), -1));
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Bad_blocksets_are_refused_and_write_nothing(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1, 10));
        var kept = await session.AddBlocksetAsync([TestData.Block(1, 10)]);

        await Assert.ThrowsAsync<ArgumentException>(async () => await session.AddBlocksetAsync(new[] { TestData.Block(1, 10), default }, new SelectXorInsertResult[2]));
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.AddBlocksetAsync(new[] { TestData.Block(1, 10), TestData.Block(5, 10) }, new SelectXorInsertResult[1]));

        Assert.Equal(new BlockDbCounts(1, 1, 1), await session.GetCountsAsync());
        Assert.Equal(2, session.PendingWrites);
        await session.CommitAsync();
        Assert.Single(await session.ListBlocksetBlocksAsync(kept));
    }

    // The blocks of a blockset are select-xor-inserted by the same call: a block not in the index (never inserted, or
    // collected since the caller's own call) is created in the volume given and marked Created, so the caller uploads it.
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_blockset_naming_a_block_not_in_the_index_creates_it_in_the_volume_and_marks_it_created(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("v1");
        var known = await session.SelectXorInsertAsync(TestData.Block(1, 10), volume);
        var results = new SelectXorInsertResult[3];

        var blockset = await session.AddBlocksetAsync(new[] { TestData.Block(1, 10), TestData.Block(5, 20), TestData.Block(5, 20) }, results, default, volume);

        Assert.Equal(new SelectXorInsertResult(known.Id, false), results[0]);
        Assert.True(results[1].Created);
        Assert.Equal(new SelectXorInsertResult(results[1].Id, false), results[2]);
        Assert.Equal(results[1].Id, await session.FindBlockAsync(TestData.Block(5, 20)));
        Assert.Equal(volume, (await session.GetBlockAsync(results[1].Id)).VolumeId);
        Assert.Equal(50, (await session.GetBlocksetAsync(blockset)).Length);
        Assert.Equal([known.Id, results[1].Id, results[1].Id], (await session.ListBlocksetBlocksAsync(blockset)).Select(b => b.BlockId));
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
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Cancellation_in_the_middle_of_a_blockset_writes_none_of_it(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var id = (await session.SelectXorInsertAsync(TestData.Block(1, 1))).Id;
        using var cts = new CancellationTokenSource();
        var ids = new CancellingList<long>(Enumerable.Repeat(id, 2000).ToArray(), cancelAt: 700, cts);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await session.AddBlocksetAsync(ids, null, cts.Token));
        await session.CommitAsync();
        Assert.Equal(new BlockDbCounts(1, 0, 0), await session.GetCountsAsync());
    }
}
