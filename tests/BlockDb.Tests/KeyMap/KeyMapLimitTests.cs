using Xunit.Abstractions;

namespace BlockDb.Tests.KeyMap;

/// <summary>
/// The key map's bounds: the memory it reserves (for the rows a file has, not for its highest ID), its memory limit
/// (the largest one fits in one array), the pages one lookup reads when hashes share a prefix, and a load that fails
/// (over the limit, or at an ID the map cannot hold) failing every repeat of the call the same way
/// (docs/ARCHITECTURE.md, M5).
/// </summary>
public sealed class KeyMapLimitTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    [Fact]
    public async Task A_generation_bump_that_adds_no_row_keeps_a_key_map_near_its_limit_working()
    {
        await using var db = Open("limit-bump.db", o =>
        {
            o.Index.KeyMapMemoryLimitMegabytes = 1;
            o.Batching.CommitEvery = 1000;
        });
        await using var session = await db.OpenSessionAsync();
        var stored = 0;
        for (var i = 0; i < 200_000; i++)
        {
            try
            {
                await session.SelectXorInsertAsync(TestData.Block(i, 10));
                stored++;
            }
            catch (BlockDbConfigurationException)
            {
                break;
            }
        }

        await session.CommitAsync();
        Assert.InRange(stored, 50_000, 131_072);
        Assert.Null(await session.FindBlockAsync(TestData.Block(-1, 10))); // a miss catches up: fine at this size
        Assert.Equal(1, await session.FindBlockAsync(TestData.Block(0, 10)));

        // A generation bump with no row added (a foreign tool raising the counter), but the map rereads the whole table into itself.
        using (var raw = new RawSql(Folder.File("limit-bump.db")))
        {
            raw.Execute("""UPDATE "BlockDbState" SET "Generation" = "Generation" + 1""");
        }

        var miss = await Record.ExceptionAsync(async () => await session.FindBlockAsync(TestData.Block(-1, 10)));
        var hit = await Record.ExceptionAsync(async () => await session.FindBlockAsync(TestData.Block(0, 10)));
        Assert.True(
            miss is null && hit is null,
            $"The map held {stored} blocks and worked; after a generation bump that added no row every lookup fails: {miss?.GetType().Name}: {miss?.Message}");
    }

    [Fact]
    public async Task The_first_load_of_a_sparse_file_reserves_memory_for_its_rows_not_for_MaxBlockId_rows()
    {
        await using (var db = Open("sparse.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            await SeedAsync(session, 10);
        }

        // The state of a file where 20 million blocks were written over time and all but 10 deleted since (IDs are
        // never reused, so MaxBlockId stays at its high-water mark). Raising MaxBlockId is what BlockDb itself does.
        using (var raw = new RawSql(Folder.File("sparse.db")))
        {
            raw.Execute("""UPDATE "BlockDbState" SET "MaxBlockId" = 20000000""");
        }

        await using (var db = Open("sparse.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(1, await session.FindBlockAsync(TestData.Block(0, 10)));
            var (blocks, bytes) = ((ISqliteBlockDatabase)db).KeyMapUsage;
            Assert.True(bytes < 16 << 20, $"The key map holds {blocks} blocks in {bytes / 1048576.0:F0} MB (the docs say 10-20 MB per million blocks): its first load reserved room for MaxBlockId - Count rows.");
        }
    }

    // Defect 3b: the map load stops with an exception at an ID above 2^32 after loading the rows below it, so the
    // first lookup throws and a repeat of the same lookup succeeds from the half-loaded map.
    [Fact]
    public async Task A_row_above_uint_max_is_refused_and_lookups_stay_the_same_when_repeated()
    {
        var path = Folder.File("fivebillion.db");
        await CreateBlocksAsync(path, 3);
        Assert.False(TryRawInsert(path, 5_000_000_000, TestData.Hash(60), 10), "the guard (F1) let a foreign writer insert a block at ID 5,000,000,000, above the map's 32-bit IDs");

        await using var db = OpenWith(path, "PInvoke");
        await using var session = await db.OpenSessionAsync();
        var (first, firstError) = await OutcomeAsync(() => session.FindBlockAsync(TestData.Block(1, 10)));
        var (second, secondError) = await OutcomeAsync(() => session.FindBlockAsync(TestData.Block(1, 10)));
        Output.WriteLine($"first: {Describe(first, firstError)}; repeat: {Describe(second, secondError)}");
        Assert.True(
            firstError?.GetType() == secondError?.GetType() && first == second,
            $"the first lookup gave {Describe(first, firstError)} and the same lookup repeated gave {Describe(second, secondError)}");
        Assert.Null(firstError);
        Assert.Equal(1, first);
    }

    // Defect 10a: the map load stops at the memory limit with an exception after loading part of the rows, so the
    // first lookup throws and a repeat of it succeeds from the half-loaded map.
    [Fact]
    public async Task A_lookup_over_the_memory_limit_behaves_the_same_when_repeated()
    {
        var path = Folder.File("limit.db");
        await using (var db = OpenWith(path, "PInvoke", o =>
        {
            o.Index.Layout = BlockLayout.KeyMap;
            o.Batching.CommitEvery = 10_000;
        }))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = 0; i < 200_000; i++)
            {
                await session.SelectXorInsertAsync(TestData.Block(i, 10));
            }
        }

        await using var limited = OpenWith(path, "PInvoke", o => o.Index.KeyMapMemoryLimitMegabytes = 1);
        await using var s = await limited.OpenSessionAsync();
        var (first, firstError) = await OutcomeAsync(() => s.FindBlockAsync(TestData.Block(0, 10)));
        var (second, secondError) = await OutcomeAsync(() => s.FindBlockAsync(TestData.Block(0, 10)));
        Output.WriteLine($"first: {Describe(first, firstError)}; repeat: {Describe(second, secondError)}");
        Assert.True(
            firstError?.GetType() == secondError?.GetType() && first == second,
            $"the first lookup gave {Describe(first, firstError)} and the same lookup repeated gave {Describe(second, secondError)}");
        Assert.True(firstError is null or BlockDbConfigurationException, $"unexpected {firstError?.GetType().Name}");
    }

    // Defect 10b: the largest accepted KeyMapMemoryLimitMegabytes (1 TiB) is far more slots than one .NET array holds.
    [Fact]
    public void The_largest_key_map_limit_fits_in_one_array()
    {
        var slots = (long)IndexOptions.MaxKeyMapMemoryLimitMegabytes * 1048576 / 8;
        Output.WriteLine($"MaxKeyMapMemoryLimitMegabytes = {IndexOptions.MaxKeyMapMemoryLimitMegabytes}: {slots:N0} slots; Array.MaxLength = {Array.MaxLength:N0}");
        var options = new BlockDbOptions { DataSource = Folder.File("max.db"), Index = { KeyMapMemoryLimitMegabytes = IndexOptions.MaxKeyMapMemoryLimitMegabytes } };
        Assert.True(
            slots <= Array.MaxLength || Record.Exception(options.Validate) is BlockDbConfigurationException,
            $"KeyMapMemoryLimitMegabytes = {IndexOptions.MaxKeyMapMemoryLimitMegabytes} ({slots:N0} slots, Array.MaxLength {Array.MaxLength:N0}) passes validation");
    }

    // Defect 4: the map key is the first 8 bytes of the hash, so hashes sharing them share one probe chain and each
    // lookup verifies every candidate on it with one SQL read.
    [Fact]
    public async Task Hashes_sharing_their_first_8_bytes_do_not_share_a_probe_chain()
    {
        const int blocks = 4000;
        var random = new Random(10);
        var prefix = new byte[8];
        random.NextBytes(prefix);
        var shared = await PagesPerLookupAsync(Folder.File("prefix.db"), blocks, () =>
        {
            var hash = new byte[32];
            random.NextBytes(hash);
            prefix.CopyTo(hash, 0);
            return hash;
        });
        var ordinary = await PagesPerLookupAsync(Folder.File("random.db"), blocks, () =>
        {
            var hash = new byte[32];
            random.NextBytes(hash);
            return hash;
        });

        Output.WriteLine($"pages read per lookup: {shared:F1} with a shared 8-byte prefix, {ordinary:F1} with random hashes ({shared / ordinary:F0}x)");
        Assert.True(shared <= 10 * ordinary, $"{shared:F1} pages per lookup with a shared 8-byte prefix against {ordinary:F1} with random hashes ({shared / ordinary:F0}x, at most 10x allowed)");
    }

    private static async Task<double> PagesPerLookupAsync(string path, int count, Func<byte[]> nextHash)
    {
        var hashes = Enumerable.Range(0, count).Select(_ => Convert.ToBase64String(nextHash())).ToArray();
        await using var db = OpenWith(path, "PInvoke", o =>
        {
            o.Index.Layout = BlockLayout.KeyMap;
            o.Batching.CommitEvery = 0;
        });
        await using var session = await db.OpenSessionAsync();
        foreach (var hash in hashes)
        {
            await session.SelectXorInsertAsync(BlockKey.Parse(hash, 10));
        }

        await session.CommitAsync();
        Assert.Equal(1, await session.FindBlockAsync(BlockKey.Parse(hashes[0], 10)));
        var before = ((ISqliteBlockDatabase)db).ReadCacheStats()!.Value;
        const int lookups = 200;
        for (var i = 0; i < lookups; i++)
        {
            var n = (i * 7919) % count;
            Assert.Equal(n + 1, await session.FindBlockAsync(BlockKey.Parse(hashes[n], 10)));
        }

        var reads = ((ISqliteBlockDatabase)db).ReadCacheStats()!.Value.Since(before);
        return (double)(reads.Hits + reads.Misses) / lookups;
    }
}
