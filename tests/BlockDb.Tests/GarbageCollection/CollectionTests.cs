namespace BlockDb.Tests.GarbageCollection;

/// <summary>
/// Deleting blocksets and collecting unreferenced blocks, for every provider and layout, PostgreSQL included: only
/// unreferenced blocks are freed and a re-added block gets one row. And collection racing a backup: a select-xor-insert
/// finds a block (so the engine does not upload it again), a collection in another session deletes it before the
/// backup's blockset names it, and new blocks are added. The ID the backup holds must never name another block
/// afterwards, or its blockset would be committed pointing at the wrong content; it must fail with
/// <see cref="BlockNotFoundException"/> instead, also after reopening, a volume collection or a bulk import.
/// </summary>
public sealed class CollectionTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Deleting_blocksets_and_collecting_frees_only_unreferenced_blocks_and_a_readded_block_gets_one_row(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        var v1 = await session.RegisterVolumeAsync("v1");
        var v2 = await session.RegisterVolumeAsync("v2");
        var shared = (await session.SelectXorInsertAsync(TestData.Block(1, 100), v1)).Id;
        var onlyA = (await session.SelectXorInsertAsync(TestData.Block(2, 200), v1)).Id;
        var onlyB = (await session.SelectXorInsertAsync(TestData.Block(3, 300), v2)).Id;
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

        Assert.Equal([new BlockInfo(onlyA, TestData.Block(2, 200), v1)], garbage);

        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.DeleteUnreferencedBlocksAsync(999));
        var nothing = await session.DeleteUnreferencedBlocksAsync(v2);
        Assert.Equal((0L, 0L, 0), (nothing.Blocks, nothing.Bytes, nothing.ByVolume.Count));
        var collected = await session.DeleteUnreferencedBlocksAsync();
        Assert.Equal((1L, 200L), (collected.Blocks, collected.Bytes));
        Assert.Equal([new VolumeCollected(v1, 1, 200)], collected.ByVolume);
        Assert.Null(await session.FindBlockAsync(TestData.Block(2, 200)));
        Assert.Equal([shared, onlyB], (await session.ListBlocksetBlocksAsync(b)).Select(x => x.BlockId));

        // Re-added after collection: one new row, found by every session and another database.
        var readded = await session.SelectXorInsertAsync(TestData.Block(2, 200), v2);
        Assert.True(readded.Created);
        await using var other = Open();
        await using var otherSession = await other.OpenSessionAsync();
        Assert.Equal(new SelectXorInsertResult(readded.Id, false), await otherSession.SelectXorInsertAsync(TestData.Block(2, 200)));
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
        Assert.Equal(3, check.Counts.Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrixWithStrategies), MemberType = typeof(ConformanceTestBase))]
    public async Task A_collected_block_id_is_never_handed_to_another_block_and_a_blockset_naming_the_collected_block_stores_it_again(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        Use(provider, layout);
        await using var db = Open(o =>
        {
            o.SelectXorInsert = strategy;
            o.Batching.CommitEvery = 1;
        });
        await using var backup = await db.OpenSessionAsync();
        await using var compact = await db.OpenSessionAsync();
        var volume = await compact.RegisterVolumeAsync("b-0001.zip");
        var kept = await compact.SelectXorInsertAsync(TestData.Block(1, 100), volume);
        await compact.AddBlocksetAsync([kept.Id]);
        var old = await compact.SelectXorInsertAsync(TestData.Block(2, 200), volume);
        await compact.CommitAsync();

        // The backup finds the unreferenced block: it exists, so the engine will not store its data again.
        var found = await backup.SelectXorInsertAsync(TestData.Block(2, 200));
        Assert.Equal(new SelectXorInsertResult(old.Id, false), found);

        // Meanwhile the compaction collects it (the highest ID in the file) and new blocks arrive, by every write call.
        Assert.Equal(1, (await compact.DeleteUnreferencedBlocksAsync()).Blocks);
        await compact.CommitAsync();
        var ids = new List<long>
        {
            (await compact.SelectXorInsertAsync(TestData.Block(3, 300))).Id,
            (await compact.SelectXorInsertAsync(TestData.Block(4, 400), volume)).Id,
            (await compact.SelectXorInsertAsync(TestData.Block(5, 500))).Id,
            (await compact.SelectXorInsertAsync(TestData.Block(6, 600), volume)).Id,
        };
        await compact.CommitAsync();
        Assert.DoesNotContain(found.Id, ids);
        Assert.All(ids, id => Assert.True(id > found.Id, $"block ID {id} handed out at or below the collected ID {found.Id}"));

        // The backup's blockset names the collected block by its key: the call stores it again under a new ID (never the
        // collected one) and marks it created, so the backup uploads its data again.
        var results = new SelectXorInsertResult[2];
        var blockset = await backup.AddBlocksetAsync(new[] { TestData.Block(1, 100), TestData.Block(2, 200) }, results);
        Assert.Equal(new SelectXorInsertResult(kept.Id, false), results[0]);
        Assert.True(results[1].Created);
        Assert.True(results[1].Id > ids.Max());
        await backup.CommitAsync();
        Assert.Equal([kept.Id, results[1].Id], (await backup.ListBlocksetBlocksAsync(blockset)).Select(b => b.BlockId));
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_collected_high_water_mark_survives_reopening_a_volume_collection_and_a_bulk_import(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        long collected;
        long volume;
        await using (var db = Open(o => o.Batching.CommitEvery = 1))
        {
            await using var session = await db.OpenSessionAsync();
            volume = await session.RegisterVolumeAsync("b-0001.zip");
            await session.AddBlocksetAsync([(await session.SelectXorInsertAsync(TestData.Block(1, 100))).Id]);
            await session.SelectXorInsertAsync(TestData.Block(2, 200), volume);
            collected = (await session.SelectXorInsertAsync(TestData.Block(3, 300), volume)).Id;
            Assert.Equal(2, (await session.DeleteUnreferencedBlocksAsync(volume)).Blocks);
            await session.CommitAsync();
        }

        // Another process (here: a fresh open) adds blocks by a bulk import, then by a session.
        await using var reopened = Open(o => o.Batching.CommitEvery = 1);
        await reopened.ImportBlocksAsync(Blocks(TestData.Hash(7), TestData.Hash(8)));
        await using var next = await reopened.OpenSessionAsync();
        var imported = await next.FindBlockAsync(TestData.Block(7, 700));
        Assert.True(imported > collected, $"imported block got ID {imported}, at or below the collected ID {collected}");
        Assert.True((await next.SelectXorInsertAsync(TestData.Block(9, 900))).Id > collected);
        Assert.Equal(4, (await next.GetCountsAsync()).Blocks);
    }

    private static async IAsyncEnumerable<ImportBlock> Blocks(params string[] hashes)
    {
        await Task.Yield();
        var size = 700;
        foreach (var hash in hashes)
        {
            yield return new ImportBlock(new BlockKey(new BlockHash(Convert.FromBase64String(hash)), size));
            size += 100;
        }
    }
}
