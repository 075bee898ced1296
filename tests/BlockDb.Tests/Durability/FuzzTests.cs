using System.Diagnostics;
using BlockDb.Opening;

namespace BlockDb.Tests.Durability;

/// <summary>Random calls with random, often invalid, input for a bounded time, checked against a model.</summary>
public sealed class FuzzTests : ConformanceTestBase
{
    private static readonly string[] HostileHashes =
    [
        "", " ", "=", "====", "A", "AAA=", "AA=A", "😀😀😀😀", "AAAA\0AAA", "AA==AA==", new string('A', 92), "abc$", "ab\ncd==",
        "'; DROP TABLE \"Block\"; --", "AAAA AAAA", "-_-_", "%00AAAAAA",
    ];

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Random_calls_with_hostile_input_only_raise_documented_errors_and_match_a_model(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var seed = Environment.TickCount;
        var random = new Random(seed);
        var blocks = new Dictionary<TextKey, long>();
        var blocksets = new Dictionary<long, TextKey[]>();
        await using var db = Open(o => o.Batching.CommitEvery = 7);
        await using var session = await db.OpenSessionAsync();
        var clock = Stopwatch.StartNew();
        var calls = 0;
        while (clock.Elapsed < TimeSpan.FromSeconds(2))
        {
            calls++;
            var key = RandomKey(random, blocks);
            var valid = IsValid(key);
            var unknownBlock = false;
            try
            {
                switch (random.Next(8))
                {
                    case 0:
                        Assert.Equal(blocks.TryGetValue(key, out var known) ? known : null, await session.FindBlockAsync(BlockKey.Parse(key.Hash, key.Size)));
                        break;
                    case 1:
                    case 2:
                    case 3:
                        var result = await session.SelectXorInsertAsync(BlockKey.Parse(key.Hash, key.Size));
                        Assert.Equal(!blocks.ContainsKey(key), result.Created);
                        blocks[key] = result.Id;
                        break;
                    case 4:
                    case 5:
                        // AddBlocksetAsync select-xor-inserts its blocks: an unknown one is created and marked so.
                        var list = Enumerable.Range(0, random.Next(0, 6)).Select(_ => RandomKey(random, blocks)).ToArray();
                        var fullHash = random.Next(3) == 0 ? RandomKey(random, blocks).Hash : null;
                        valid = list.All(IsValid) && (fullHash is null || BlockHash.IsValid(fullHash));
                        unknownBlock = false;
                        var results = new SelectXorInsertResult[list.Length];
                        var id = await session.AddBlocksetAsync(list.Select(k => BlockKey.Parse(k.Hash, k.Size)).ToArray(), results, fullHash is null ? default : BlockHash.Parse(fullHash));
                        for (var i = 0; i < list.Length; i++)
                        {
                            Assert.Equal(!blocks.ContainsKey(list[i]), results[i].Created);
                            blocks[list[i]] = results[i].Id;
                        }

                        blocksets[id] = list;
                        break;
                    case 6:
                        valid = true;
                        var wanted = random.Next(3) == 0 ? random.NextInt64(-10, 10_000) : blocksets.Keys.ElementAtOrDefault(random.Next(Math.Max(1, blocksets.Count)));
                        var listed = await session.ListBlocksetBlocksAsync(wanted);
                        Assert.Equal(blocksets[wanted], listed.Select(b => new TextKey(b.Block.Hash.ToString(), b.Block.Size)));
                        break;
                    default:
                        valid = true;
                        if (random.Next(2) == 0)
                        {
                            await session.CommitAsync();
                        }
                        else
                        {
                            Assert.Equal(new BlockDbCounts(blocks.Count, blocksets.Count, blocksets.Values.Sum(b => b.Length)), await session.GetCountsAsync());
                        }

                        break;
                }
            }
            catch (ArgumentException)
            {
                Assert.False(valid, $"valid input refused (seed {seed})");
            }
            catch (BlockNotFoundException)
            {
                Assert.True(valid && unknownBlock, $"block not found for a blockset of known blocks (seed {seed})");
            }
            catch (BlocksetNotFoundException e)
            {
                Assert.False(blocksets.ContainsKey(e.BlocksetId), $"a known blockset was not found (seed {seed})");
            }
        }

        await session.CommitAsync();
        Assert.True(calls > 100, $"only {calls} calls");
        Assert.Equal(new BlockDbCounts(blocks.Count, blocksets.Count, blocksets.Values.Sum(b => b.Length)), await session.GetCountsAsync());
        if (IsServer)
        {
            Assert.True((await db.CheckAsync()).IsClean);
            return;
        }

        using var raw = ProviderCatalog.SqliteDriver(Provider).Open(new Drivers.SqliteOpenOptions(DbPath, Drivers.SqliteOpenMode.ReadOnly));
        Assert.Equal("ok", raw.QueryText("PRAGMA integrity_check"));
    }

    private static bool IsValid(TextKey key) => BlockHash.IsValid(key.Hash) && key.Size >= 1;

    private static TextKey RandomKey(Random random, Dictionary<TextKey, long> known) => random.Next(6) switch
    {
        0 when known.Count > 0 => known.Keys.ElementAt(random.Next(known.Count)),
        1 => new(HostileHashes[random.Next(HostileHashes.Length)], random.Next(-3, 5)),
        2 => new(RandomHash(random), random.Next(-2, 3)),
        _ => new(TestData.Hash(random.Next(200)), random.Next(1, 4)),
    };

    private static string RandomHash(Random random)
    {
        var bytes = new byte[random.Next(1, 65)];
        random.NextBytes(bytes);
        return Convert.ToBase64String(bytes);
    }

    private static long RandomId(Random random, Dictionary<TextKey, long> known) =>
        known.Count == 0 ? random.NextInt64(1, 10) : known.Values.ElementAt(random.Next(known.Count));

    /// <summary>A block as a caller names it in Duplicati's text, often invalid: each call parses it (<see cref="BlockKey.Parse"/>), which refuses what is invalid.</summary>
    private readonly record struct TextKey(string Hash, long Size);
}
