using BlockDb.MicrosoftData;
using BlockDb.Opening;
using Microsoft.Data.Sqlite;

namespace BlockDb.Tests.CallerTransaction;

/// <summary>
/// In a caller's transaction (X1): random sequences of span select-xor-inserts and one-call files (1 to 33 blocks with
/// repeats), refused calls (a new block for a deleting volume, a found block in one, a length past the largest), the
/// caller's commits and rollbacks, blockset deletes and collections, checked after every step against a model: every
/// result's ID and <c>Created</c>, every block found, the counts. A call that throws leaves nothing of itself and the
/// caller's transaction keeps what came before it (B5, X1).
/// </summary>
public sealed class CallerWholeCallModelTests : IDisposable
{
    private const int Universe = 70;

    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static IEnumerable<object[]> Cases() =>
        from layout in new[] { BlockLayout.TextHash, BlockLayout.BlobHash }
        from seed in new[] { 1, 2, 3 }
        select new object[] { layout, seed };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Random_whole_calls_refusals_and_caller_commits_keep_exactly_what_the_model_keeps(BlockLayout layout, int seed)
    {
        var path = _folder.File($"caller-{layout}-{seed}.db");
        using (new BlockDatabaseBuilder(new BlockDbOptions { DataSource = path, Index = { Layout = layout } }).UseSqliteDriver(MicrosoftDataDriver.Instance).Build())
        {
        }

        var random = new Random(seed);
        using var caller = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = path, Pooling = false, DefaultTimeout = 2 }.ToString());
        caller.Open();
        var transaction = caller.BeginTransaction(deferred: true);
        var rows = new Dictionary<BlockKey, (long Id, bool Doomed)>();
        var blocksets = new Dictionary<long, BlockKey[]>();
        var (committedRows, committedBlocksets) = (new Dictionary<BlockKey, (long Id, bool Doomed)>(), new Dictionary<long, BlockKey[]>());
        await using (var db = new BlockDatabaseBuilder(new BlockDbOptions()).UseCallerConnection(MicrosoftDataDriver.Instance.Borrow(caller)).Build())
        await using (var session = await db.OpenSessionAsync())
        {
            var live = await session.RegisterVolumeAsync("live.zip", VolumeState.Uploaded);
            var doomed = await session.RegisterVolumeAsync("doomed.zip", VolumeState.Uploaded);
            var doomedKey = TestData.Block(9_999, 100);
            rows[doomedKey] = ((await session.SelectXorInsertAsync(doomedKey, doomed)).Id, true);
            await session.SetVolumeStateAsync(doomed, VolumeState.Deleting);
            transaction.Commit();
            transaction = caller.BeginTransaction(deferred: true);
            (committedRows, committedBlocksets) = (new(rows), new(blocksets));

            for (var step = 0; step < 150; step++)
            {
                var what = random.Next(100);
                var trace = $"seed {seed}, step {step}, op {what}";
                if (what < 30)
                {
                    var keys = Keys(random);
                    var toDoomed = random.Next(10) == 0;
                    var results = new SelectXorInsertResult[keys.Length];
                    if (toDoomed && keys.Any(k => !rows.ContainsKey(k)))
                    {
                        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SelectXorInsertManyAsync(keys, results, doomed));
                    }
                    else
                    {
                        var created = await session.SelectXorInsertManyAsync(keys, results, toDoomed ? doomed : live);
                        Assert.Equal(Apply(rows, keys, results, trace), created);
                    }
                }
                else if (what < 60)
                {
                    var keys = Keys(random).ToList();
                    var refusal = random.Next(10);
                    if (refusal == 0)
                    {
                        keys.Insert(random.Next(keys.Count + 1), doomedKey);
                    }
                    else if (refusal == 1)
                    {
                        keys.Add(TestData.Block(5_000 + random.Next(3), long.MaxValue));
                    }

                    var results = new SelectXorInsertResult[keys.Count];
                    if (keys.Any(k => rows.TryGetValue(k, out var row) && row.Doomed))
                    {
                        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync(keys.ToArray(), results, volumeId: live));
                    }
                    else if (refusal == 1)
                    {
                        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.AddBlocksetAsync(keys.ToArray(), results, volumeId: live));
                    }
                    else
                    {
                        var id = await session.AddBlocksetAsync(keys.ToArray(), results, volumeId: live);
                        Apply(rows, [.. keys], results, trace);
                        blocksets[id] = [.. keys];
                        Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(id)).Select(b => b.BlockId));
                    }
                }
                else if (what < 68)
                {
                    var key = TestData.Block(random.Next(Universe), 100);
                    Apply(rows, [key], [await session.SelectXorInsertAsync(key, live)], trace);
                }
                else if (what < 78)
                {
                    transaction.Commit();
                    transaction = caller.BeginTransaction(deferred: true);
                    (committedRows, committedBlocksets) = (new(rows), new(blocksets));
                }
                else if (what < 84)
                {
                    transaction.Rollback();
                    transaction = caller.BeginTransaction(deferred: true);
                    (rows, blocksets) = (new(committedRows), new(committedBlocksets));
                }
                else if (what < 90 && blocksets.Count > 0)
                {
                    var id = blocksets.Keys.ElementAt(random.Next(blocksets.Count));
                    await session.DeleteBlocksetAsync(id);
                    blocksets.Remove(id);
                }
                else
                {
                    await session.DeleteUnreferencedBlocksAsync();
                    var referenced = blocksets.Values.SelectMany(k => k).ToHashSet();
                    foreach (var key in rows.Keys.Where(k => !referenced.Contains(k)).ToList())
                    {
                        rows.Remove(key);
                    }
                }

                foreach (var key in Enumerable.Range(0, Universe).Select(i => TestData.Block(i, 100)).Append(doomedKey))
                {
                    var expected = rows.TryGetValue(key, out var row) ? row.Id : (long?)null;
                    Assert.True(expected == await session.FindBlockAsync(key), $"{trace}: block {key.Hash} should be {expected?.ToString() ?? "missing"}.");
                }

                var counts = await session.GetCountsAsync();
                Assert.True(new BlockDbCounts(rows.Count, blocksets.Count, blocksets.Values.Sum(k => k.Length)) == counts, $"{trace}: counts {counts}, model ({rows.Count}, {blocksets.Count}).");
            }
        }

        transaction.Commit();
    }

    private static BlockKey[] Keys(Random random)
    {
        var count = new[] { 1, 2, 15, 16, 17, 32, 33 }[random.Next(7)];
        return Enumerable.Range(0, count).Select(_ => TestData.Block(random.Next(Universe), 100)).ToArray();
    }

    /// <summary>Checks a successful call's results against one select-xor-insert per block in order; returns how many it created.</summary>
    private static int Apply(Dictionary<BlockKey, (long Id, bool Doomed)> rows, BlockKey[] keys, SelectXorInsertResult[] results, string trace)
    {
        var created = 0;
        for (var i = 0; i < keys.Length; i++)
        {
            if (rows.TryGetValue(keys[i], out var row))
            {
                Assert.True(new SelectXorInsertResult(row.Id, false) == results[i], $"{trace}: block {i} of {keys.Length} should be found as {row.Id}, got {results[i]}.");
            }
            else
            {
                Assert.True(results[i].Created, $"{trace}: block {i} of {keys.Length} should be created, got {results[i]}.");
                rows[keys[i]] = (results[i].Id, false);
                created++;
            }
        }

        return created;
    }
}
