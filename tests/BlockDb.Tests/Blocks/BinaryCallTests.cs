namespace BlockDb.Tests.Blocks;

/// <summary>
/// The binary-hash and many-blocks calls (<see cref="BlockHash"/>, <see cref="BlockKey"/>), for every provider and
/// layout, PostgreSQL included, on a session and on the shared session: they give the same IDs and rows as the text
/// calls, check everything before writing, and keep the blockset all or nothing.
/// </summary>
public sealed class BinaryCallTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrixWithStrategies), MemberType = typeof(ConformanceTestBase))]
    public async Task Binary_and_text_calls_find_the_same_blocks(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        Use(provider, layout);
        await using var db = Open(o =>
        {
            o.SelectXorInsert = strategy;
            o.Batching.CommitEvery = 3;
        });
        await using var session = await db.OpenSessionAsync();
        var byBytes = await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(1), 100));
        Assert.True(byBytes.Created);
        Assert.Equal(new SelectXorInsertResult(byBytes.Id, false), await session.SelectXorInsertAsync(TestData.Block(1, 100)));
        var byText = await session.SelectXorInsertAsync(TestData.Block(2, 100));
        Assert.Equal(new SelectXorInsertResult(byText.Id, false), await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(2), 100)));
        Assert.Equal(byText.Id, await session.FindBlockAsync(new BlockKey(TestData.Bytes(2), 100)));
        Assert.Null(await session.FindBlockAsync(new BlockKey(TestData.Bytes(2), 101)));
        Assert.Null(await session.FindBlockAsync(new BlockKey(TestData.Bytes(3), 100)));
        await session.CommitAsync();

        Assert.Equal(TestData.Hash(1), (await session.GetBlockAsync(byBytes.Id)).Block.Hash.ToString());
        Assert.Equal(2, (await session.GetCountsAsync()).Blocks);
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.SelectXorInsertAsync(new BlockKey(default(BlockHash), 100)));
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.FindBlockAsync(new BlockKey(default(BlockHash), 100)));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(4), 0)));
        Assert.Equal(2, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Many_blocks_in_one_call_give_what_one_call_per_block_gives(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 5); // commits fall between blocks of one call
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("b-1.zip");
        var known = await session.SelectXorInsertAsync(TestData.Block(7, 100));
        BlockKey[] blocks = [TestData.Block(1, 100), TestData.Block(7, 100), TestData.Block(2, 100), TestData.Block(1, 100), TestData.Block(3, 50)];
        var results = new SelectXorInsertResult[blocks.Length + 2];

        var created = await session.SelectXorInsertManyAsync(blocks, results, volume);
        await session.CommitAsync();

        Assert.Equal(3, created);
        Assert.Equal(new SelectXorInsertResult(known.Id, false), results[1]);
        Assert.True(results[0].Created && results[2].Created && results[4].Created);
        Assert.Equal(new SelectXorInsertResult(results[0].Id, false), results[3]);
        Assert.Equal(default, results[5]);
        for (var i = 0; i < blocks.Length; i++)
        {
            Assert.Equal(results[i].Id, await session.FindBlockAsync(BlockKey.Parse(blocks[i].Hash.ToString(), blocks[i].Size)));
        }

        Assert.Equal(volume, (await session.GetBlockAsync(results[2].Id)).VolumeId);
        Assert.Null((await session.GetBlockAsync(known.Id)).VolumeId); // a known block keeps its own volume
        Assert.Equal(4, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_bad_block_or_a_short_buffer_is_refused_before_anything_is_written(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        BlockKey[] good = [TestData.Block(1), TestData.Block(2)];
        BlockKey[] withDefault = [TestData.Block(1), default];

        var shortBuffer = await Assert.ThrowsAsync<ArgumentException>(async () => await session.SelectXorInsertManyAsync(good, new SelectXorInsertResult[1]));
        Assert.Equal("results", shortBuffer.ParamName);
        var file = await Assert.ThrowsAsync<ArgumentException>(async () => await session.AddBlocksetAsync(withDefault, new SelectXorInsertResult[2]));
        Assert.Contains("Block 1 ", file.Message, StringComparison.Ordinal);
        Assert.Equal("blocks", file.ParamName);
        var many = await Assert.ThrowsAsync<ArgumentException>(async () => await session.SelectXorInsertManyAsync(withDefault, new SelectXorInsertResult[2]));
        Assert.Equal("blocks", many.ParamName);
        Assert.Equal(new BlockDbCounts(0, 0, 0), await session.GetCountsAsync());
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_file_in_one_call_stores_its_blocks_and_its_blockset_in_order(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 7);
        await using var session = await db.OpenSessionAsync();
        var blocks = Enumerable.Range(0, 16).Select(i => TestData.Block(i % 5, 1000 + (i % 5))).ToArray(); // repeats inside the file
        var results = new SelectXorInsertResult[16];

        var blocksetId = await session.AddBlocksetAsync(blocks, results, TestData.Bytes(99));
        var empty = await session.AddBlocksetAsync(ReadOnlyMemory<BlockKey>.Empty, Memory<SelectXorInsertResult>.Empty);
        await session.CommitAsync();

        var listed = await session.ListBlocksetBlocksAsync(blocksetId);
        Assert.Equal(results.Select(r => r.Id), listed.Select(b => b.BlockId));
        Assert.Equal(blocks, listed.Select(b => b.Block));
        Assert.Equal(5, results.Count(r => r.Created));
        var info = await session.GetBlocksetAsync(blocksetId);
        Assert.Equal(blocks.Sum(b => b.Size), info.Length);
        Assert.Equal(TestData.Hash(99), info.FullHash);
        Assert.Equal(blocksetId, await session.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(99)), info.Length));
        Assert.Equal((0L, 0), ((await session.GetBlocksetAsync(empty)).Length, (await session.GetBlocksetAsync(empty)).BlockCount));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_cancelled_or_refused_file_writes_no_blockset(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var blocks = Enumerable.Range(0, 4).Select(i => TestData.Block(i, 100)).ToArray();
        using var cancelled = new CancellationTokenSource();
        await cancelled.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await session.AddBlocksetAsync(blocks, new SelectXorInsertResult[4], cancellationToken: cancelled.Token));

        var doomed = await session.RegisterVolumeAsync("doomed.zip", VolumeState.Uploaded);
        var old = await session.SelectXorInsertAsync(TestData.Block(50, 100), doomed);
        await session.SetVolumeStateAsync(doomed, VolumeState.Deleting);
        BlockKey[] withDoomed = [TestData.Block(60, 100), TestData.Block(50, 100)];
        var results = new SelectXorInsertResult[2];
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync(withDoomed, results));
        await session.CommitAsync();

        var counts = await session.GetCountsAsync();
        Assert.Equal(0, counts.Blocksets);
        Assert.Equal(0, counts.BlocksetEntries);
        Assert.Null(await session.FindBlockAsync(TestData.Block(60, 100))); // the call is whole: its new block went with its blockset
        Assert.Equal(old.Id, await session.FindBlockAsync(TestData.Block(50, 100)));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_shared_session_takes_the_binary_and_many_block_calls_and_acknowledges_them_committed(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using (var db = Open())
        {
            await using var shared = db.OpenSharedSession();
            var blocks = Enumerable.Range(0, 8).Select(i => TestData.Block(i, 100)).ToArray();
            var results = new SelectXorInsertResult[8];
            Assert.Equal(8, await shared.SelectXorInsertManyAsync(blocks, results));
            var file = new SelectXorInsertResult[8];
            var blocksetId = await shared.AddBlocksetAsync(blocks, file, TestData.Bytes(1000));
            Assert.Equal(results.Select(r => r.Id), file.Select(r => r.Id));
            Assert.All(file, r => Assert.False(r.Created));
            var single = await shared.SelectXorInsertAsync(new BlockKey(TestData.Bytes(20), 100));
            Assert.Equal(single.Id, await shared.FindBlockAsync(new BlockKey(TestData.Bytes(20), 100)));

            // Acknowledged means committed: a second database sees it all.
            await using var other = Open();
            await using var reader = await other.OpenSessionAsync();
            Assert.Equal(results[3].Id, await reader.FindBlockAsync(new BlockKey(TestData.Bytes(3), 100)));
            Assert.Equal(8, (await reader.GetBlocksetAsync(blocksetId)).BlockCount);
            Assert.Equal(9, (await reader.GetCountsAsync()).Blocks);
        }
    }
}
