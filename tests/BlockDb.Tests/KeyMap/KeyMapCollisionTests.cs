using BlockDb.KeyMap;
using BlockDb.Opening;

namespace BlockDb.Tests.KeyMap;

/// <summary>
/// Blocks whose map keys collide (the file's seed fixed, so pairs with one 32-bit key are found): a one-call file and a
/// span select-xor-insert of 15, 16, 17, 32 and 33 blocks, colliding blocks placed across the 16-to-a-read verification
/// and repeated, get the IDs of one select-xor-insert per block, stored or created in the same call [M1].
/// </summary>
public sealed class KeyMapCollisionTests : ConformanceTestBase
{
    private const long Seed = 424_242;

    public static IEnumerable<object[]> Cases() =>
        from provider in ProviderCatalog.SqliteNames
        from count in new[] { 15, 16, 17, 32, 33 }
        from file in new[] { true, false }
        select new object[] { provider, count, file };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Colliding_blocks_across_verification_reads_get_the_ids_of_one_call_per_block(string provider, int count, bool file)
    {
        Use(provider, BlockLayout.KeyMap);
        await using (Open())
        {
        }

        using (var raw = new RawSql(DbPath, provider))
        {
            raw.Execute($"""INSERT INTO "BlockDbSettings" ("Name", "Value") VALUES ('KeyMapSeed', '{Seed}')""");
        }

        var pairs = CollidingPairs(8);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();

        // The first of each pair stored and committed; half of the seconds stored in the open batch.
        var ids = new Dictionary<BlockKey, long>();
        foreach (var (a, _) in pairs)
        {
            ids[a] = (await session.SelectXorInsertAsync(a)).Id;
        }

        await session.CommitAsync();
        Assert.Equal(ids[pairs[0].A], await session.FindBlockAsync(pairs[0].A)); // the map is loaded
        for (var i = 0; i < pairs.Count; i += 2)
        {
            ids[pairs[i].B] = (await session.SelectXorInsertAsync(pairs[i].B)).Id;
        }

        // Colliding keys at every place, so each read of 16 holds some; firsts and seconds, repeated.
        var keys = Enumerable.Range(0, count).Select(i => i % 3 == 0 ? pairs[(i / 3) % pairs.Count].B : pairs[(i * 5) % pairs.Count].A).ToArray();
        keys[count - 1] = keys[0];
        var results = new SelectXorInsertResult[count];
        long blocksetId = 0;
        if (file)
        {
            blocksetId = await session.AddBlocksetAsync(keys, results);
        }
        else
        {
            await session.SelectXorInsertManyAsync(keys, results);
        }

        for (var i = 0; i < count; i++)
        {
            if (ids.TryGetValue(keys[i], out var id))
            {
                Assert.Equal(new SelectXorInsertResult(id, false), results[i]);
            }
            else
            {
                Assert.True(results[i].Created, $"block {i} should be created");
                ids[keys[i]] = results[i].Id;
            }
        }

        await session.CommitAsync();
        foreach (var (key, id) in ids)
        {
            Assert.Equal(id, await session.FindBlockAsync(key));
        }

        if (file)
        {
            Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(blocksetId)).Select(b => b.BlockId));
        }

        Assert.Equal(ids.Count, (await session.GetCountsAsync()).Blocks);
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
    }

    /// <summary>Pairs of distinct blocks of 100 bytes whose keys under <see cref="Seed"/> are equal.</summary>
    private static List<(BlockKey A, BlockKey B)> CollidingPairs(int wanted)
    {
        var hasher = new KeyHasher(Seed);
        var seen = new Dictionary<uint, int>();
        var pairs = new List<(BlockKey, BlockKey)>();
        for (var i = 0; pairs.Count < wanted; i++)
        {
            var block = TestData.Block(i, 100);
            var key = hasher.KeyOf(block.Hash.Bytes, block.Size);
            if (seen.TryGetValue(key, out var other))
            {
                pairs.Add((TestData.Block(other, 100), block));
            }
            else
            {
                seen[key] = i;
            }
        }

        return pairs;
    }
}
