namespace BlockDb.Tests.WholeCall;

/// <summary>
/// Random sequences of span select-xor-inserts and one-call files (spans of 1 to 33 blocks with repeats), refused calls
/// (a new block for a deleting volume, a found block in one, a length past the largest), commits, rollbacks, a foreign
/// writer on the file, collections and reopening, checked after every step against a model of what must be stored:
/// every result's ID and <c>Created</c>, every block found, the counts. A call that throws leaves nothing of itself and
/// the batch before it stays (B5); a commit after every write or after a few keeps what it committed.
/// </summary>
public sealed class WholeCallModelTests : ConformanceTestBase
{
    private const int Universe = 70;

    public static IEnumerable<object[]> MatrixWithSeeds() =>
        from pair in ProviderMatrix()
        from kind in new[] { "session", "shared" }
        from seed in new[] { 1, 2, 3 }
        select new object[] { pair[0], pair[1], kind, seed };

    [Theory]
    [MemberData(nameof(MatrixWithSeeds))]
    public async Task Random_whole_calls_refusals_and_commits_keep_exactly_what_the_model_keeps(string provider, BlockLayout layout, string kind, int seed)
    {
        Use(provider, layout);
        var shared = kind == "shared";
        var random = new Random(seed);
        var commitEvery = new[] { 0, 1, 3 }[seed % 3];
        var model = new Model();
        var db = Open(o => o.Batching.CommitEvery = commitEvery);
        var session = await db.OpenSessionAsync();
        var sharedSession = shared ? db.OpenSharedSession() : null;
        IBlockWriter w = (IBlockWriter?)sharedSession ?? session;
        IBlockReader r = (IBlockReader?)sharedSession ?? session;
        try
        {
            var live = await session.RegisterVolumeAsync("live.zip", VolumeState.Uploaded);
            var doomed = await session.RegisterVolumeAsync("doomed.zip", VolumeState.Uploaded);
            var doomedKey = TestData.Block(9_999, 100);
            var doomedId = (await session.SelectXorInsertAsync(doomedKey, doomed)).Id;
            await session.SetVolumeStateAsync(doomed, VolumeState.Deleting);
            await session.CommitAsync();
            model.Rows[doomedKey] = (doomedId, true);
            model.Commit();

            for (var step = 0; step < 150; step++)
            {
                var what = random.Next(100);
                var trace = $"seed {seed}, step {step}, op {what}";
                if (what < 30)
                {
                    var keys = Keys(random);
                    var toDoomed = random.Next(10) == 0;
                    var results = new SelectXorInsertResult[keys.Length];
                    var expectFail = toDoomed && keys.Any(k => !model.Rows.ContainsKey(k));
                    if (expectFail)
                    {
                        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await w.SelectXorInsertManyAsync(keys, results, doomed));
                    }
                    else
                    {
                        var created = await w.SelectXorInsertManyAsync(keys, results, toDoomed ? doomed : live);
                        Assert.Equal(model.Apply(keys, results, trace), created);
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
                    var conflict = keys.Any(k => model.Rows.TryGetValue(k, out var row) && row.Doomed);
                    if (conflict)
                    {
                        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await w.AddBlocksetAsync(keys.ToArray(), results, volumeId: live));
                    }
                    else if (refusal == 1)
                    {
                        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await w.AddBlocksetAsync(keys.ToArray(), results, volumeId: live));
                    }
                    else
                    {
                        var id = await w.AddBlocksetAsync(keys.ToArray(), results, volumeId: live);
                        model.Apply([.. keys], results, trace);
                        model.Blocksets[id] = [.. keys];
                        Assert.Equal(results.Select(r => r.Id), (await r.ListBlocksetBlocksAsync(id)).Select(b => b.BlockId));
                    }
                }
                else if (what < 68)
                {
                    var key = Key(random);
                    var result = await w.SelectXorInsertAsync(key, live);
                    model.Apply([key], [result], trace);
                }
                else if (what < 82 && shared)
                {
                    // The shared session commits every call.
                }
                else if (what < 76)
                {
                    await session.CommitAsync();
                    model.Commit();
                }
                else if (what < 82)
                {
                    await session.RollbackAsync();
                    model.Rollback();
                }
                else if (what < 86 && model.Blocksets.Count > 0)
                {
                    var id = model.Blocksets.Keys.ElementAt(random.Next(model.Blocksets.Count));
                    await w.DeleteBlocksetAsync(id);
                    model.Blocksets.Remove(id);
                }
                else if (what < 90)
                {
                    await w.DeleteUnreferencedBlocksAsync();
                    var referenced = model.Blocksets.Values.SelectMany(k => k).ToHashSet();
                    foreach (var key in model.Rows.Keys.Where(k => !referenced.Contains(k)).ToList())
                    {
                        model.Rows.Remove(key);
                    }
                }
                else if (what < 95 && shared)
                {
                }
                else if (what < 95)
                {
                    // A foreign writer: another database on the file, between this session's transactions.
                    await session.CommitAsync();
                    model.Commit();
                    await using (var other = Open())
                    await using (var foreign = await other.OpenSessionAsync())
                    {
                        var keys = Keys(random);
                        var results = new SelectXorInsertResult[keys.Length];
                        await foreign.SelectXorInsertManyAsync(keys, results, live);
                        model.Apply(keys, results, trace + " (foreign)");
                        await foreign.CommitAsync();
                    }

                    model.Commit();
                    await session.CommitAsync(); // ends the read transaction: the next read sees the foreign rows
                }
                else
                {
                    await session.CommitAsync();
                    model.Commit();
                    if (sharedSession is not null)
                    {
                        await sharedSession.DisposeAsync();
                    }

                    await session.DisposeAsync();
                    await db.DisposeAsync();
                    db = Open(o => o.Batching.CommitEvery = commitEvery);
                    session = await db.OpenSessionAsync();
                    sharedSession = shared ? db.OpenSharedSession() : null;
                    w = (IBlockWriter?)sharedSession ?? session;
                    r = (IBlockReader?)sharedSession ?? session;
                }

                if (shared || session.PendingWrites == 0)
                {
                    model.Commit(); // the policy committed (or nothing was written)
                }

                await AssertMatchesAsync(r, model, doomedKey, trace);
            }

            await session.CommitAsync();
            model.Commit();
        }
        finally
        {
            if (sharedSession is not null)
            {
                await sharedSession.DisposeAsync();
            }

            await session.DisposeAsync();
            await db.DisposeAsync();
        }

        await using var reopened = Open();
        await using var check = await reopened.OpenSessionAsync();
        await AssertMatchesAsync(check, model, TestData.Block(9_999, 100), "reopened");
    }

    private static BlockKey Key(Random random) => TestData.Block(random.Next(Universe), 100);

    private static BlockKey[] Keys(Random random)
    {
        var count = new[] { 1, 2, 15, 16, 17, 32, 33 }[random.Next(7)];
        return Enumerable.Range(0, count).Select(_ => Key(random)).ToArray();
    }

    private static async Task AssertMatchesAsync(IBlockReader session, Model model, BlockKey doomedKey, string trace)
    {
        foreach (var key in Enumerable.Range(0, Universe).Select(i => TestData.Block(i, 100)).Append(doomedKey))
        {
            var expected = model.Rows.TryGetValue(key, out var row) ? row.Id : (long?)null;
            Assert.True(expected == await session.FindBlockAsync(key), $"{trace}: block {key.Hash} should be {expected?.ToString() ?? "missing"}.");
        }

        var counts = await session.GetCountsAsync();
        Assert.True(
            new BlockDbCounts(model.Rows.Count, model.Blocksets.Count, model.Blocksets.Values.Sum(k => k.Length)) == counts,
            $"{trace}: counts {counts}, model ({model.Rows.Count}, {model.Blocksets.Count}).");
    }

    private sealed class Model
    {
        private Dictionary<BlockKey, (long Id, bool Doomed)> _committedRows = [];
        private Dictionary<long, BlockKey[]> _committedBlocksets = [];

        public Dictionary<BlockKey, (long Id, bool Doomed)> Rows { get; private set; } = [];

        public Dictionary<long, BlockKey[]> Blocksets { get; private set; } = [];

        /// <summary>Checks a successful call's results against one select-xor-insert per block in order; returns how many it created.</summary>
        public int Apply(BlockKey[] keys, SelectXorInsertResult[] results, string trace)
        {
            var created = 0;
            for (var i = 0; i < keys.Length; i++)
            {
                if (Rows.TryGetValue(keys[i], out var row))
                {
                    Assert.True(new SelectXorInsertResult(row.Id, false) == results[i], $"{trace}: block {i} of {keys.Length} should be found as {row.Id}, got {results[i]}.");
                }
                else
                {
                    Assert.True(results[i].Created, $"{trace}: block {i} of {keys.Length} should be created, got {results[i]}.");
                    Assert.DoesNotContain(results[i].Id, Rows.Values.Select(r => r.Id));
                    Rows[keys[i]] = (results[i].Id, false);
                    created++;
                }
            }

            return created;
        }

        public void Commit() => (_committedRows, _committedBlocksets) = (new(Rows), new(Blocksets));

        public void Rollback() => (Rows, Blocksets) = (new(_committedRows), new(_committedBlocksets));
    }
}
