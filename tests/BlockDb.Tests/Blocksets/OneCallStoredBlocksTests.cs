namespace BlockDb.Tests.Blocksets;

/// <summary>
/// <see cref="IBlockWriter.AddBlocksetAsync"/> finds a file's stored blocks before its new ones (KeyMap verifies its map
/// hits 16 to a read): the IDs, the results and the rows must be those of one select-xor-insert per block in order, across
/// reads, with repeats, and when a foreign writer has made map entries stale. Every SQLite provider and layout.
/// </summary>
public sealed class OneCallStoredBlocksTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Stored_and_new_blocks_across_several_reads_get_the_ids_of_one_call_per_block(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var stored = new long[50];
        for (var i = 0; i < stored.Length; i++)
        {
            stored[i] = (await session.SelectXorInsertAsync(TestData.Block(i, 100))).Id;
        }

        await session.CommitAsync();

        // 45 blocks: stored ones out of ID order and repeated, new ones (one repeated), a stored hash at another size.
        var seeds = Enumerable.Range(0, 45).Select(i => i % 5 == 4 ? 1_000 + (i % 10) : (i * 17) % 50).ToArray();
        var file = seeds.Select((s, i) => TestData.Block(s, i == 7 ? 101 : 100)).ToArray();
        var results = new SelectXorInsertResult[file.Length];
        var blocksetId = await session.AddBlocksetAsync(file, results);
        await session.CommitAsync();

        var firstNew = new Dictionary<BlockKey, long>();
        for (var i = 0; i < file.Length; i++)
        {
            if (file[i].Size == 100 && seeds[i] < 50)
            {
                Assert.Equal(new SelectXorInsertResult(stored[seeds[i]], false), results[i]);
            }
            else if (firstNew.TryGetValue(file[i], out var id))
            {
                Assert.Equal(new SelectXorInsertResult(id, false), results[i]);
            }
            else
            {
                Assert.True(results[i].Created, $"block {i} should be new");
                firstNew[file[i]] = results[i].Id;
            }
        }

        Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(blocksetId)).Select(b => b.BlockId));
        Assert.Equal(50 + firstNew.Count, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Rows_a_foreign_writer_deleted_or_resized_are_not_taken_from_a_stale_map_entry(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var stored = new long[40];
        for (var i = 0; i < stored.Length; i++)
        {
            stored[i] = (await session.SelectXorInsertAsync(TestData.Block(i, 100))).Id;
        }

        await session.CommitAsync();
        Assert.Equal(stored[0], await session.FindBlockAsync(TestData.Block(0, 100))); // the map is loaded with every row

        // Rows in the first, second and third read of 16: two deleted, one given another size.
        using (var foreign = new RawSql(DbPath, provider))
        {
            foreign.Execute($"""DELETE FROM "Block" WHERE "ID" IN ({stored[3]}, {stored[20]})""");
            foreign.Execute($"""UPDATE "Block" SET "Size" = 999 WHERE "ID" = {stored[35]}""");
        }

        var file = Enumerable.Range(0, 40).Select(i => TestData.Block(i, 100)).Append(TestData.Block(35, 999)).ToArray();
        var results = new SelectXorInsertResult[file.Length];
        var blocksetId = await session.AddBlocksetAsync(file, results);
        await session.CommitAsync();

        for (var i = 0; i < 40; i++)
        {
            if (i is 3 or 20 or 35)
            {
                Assert.True(results[i].Created, $"block {i} should be stored again");
                Assert.DoesNotContain(results[i].Id, stored);
            }
            else
            {
                Assert.Equal(new SelectXorInsertResult(stored[i], false), results[i]);
            }
        }

        Assert.Equal(new SelectXorInsertResult(stored[35], false), results[40]);
        Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(blocksetId)).Select(b => b.BlockId));
        Assert.Equal((40 * 100) + 999, (await session.GetBlocksetAsync(blocksetId)).Length);
    }
}
