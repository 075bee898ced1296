namespace BlockDb.Tests.WholeCall;

/// <summary>
/// The model and the steps of the whole-call model tests (a session of its own, a shared session, a caller's transaction):
/// what must be stored (every block's ID, whether it sits in the deleting volume, every blockset's blocks), the steps
/// every such test takes (a span select-xor-insert, a one-call file, one block, a blockset delete, a collection, each
/// checked against the model or refused as the model says) and the check after every step (every block found, the
/// counts). A test keeps only what differs: how its session is opened, committed and rolled back.
/// </summary>
internal sealed class WholeCallModel
{
    /// <summary>How many blocks the steps draw from (keys 0 to 69, of 100 bytes).</summary>
    public const int Universe = 70;

    /// <summary>The block stored in the deleting volume: a call with it fails as a conflict.</summary>
    public static readonly BlockKey DoomedKey = TestData.Block(9_999, 100);

    private Dictionary<BlockKey, (long Id, bool Doomed)> _committedRows = [];
    private Dictionary<long, BlockKey[]> _committedBlocksets = [];

    public Dictionary<BlockKey, (long Id, bool Doomed)> Rows { get; private set; } = [];

    public Dictionary<long, BlockKey[]> Blocksets { get; private set; } = [];

    /// <summary>The uploaded volume the steps write to.</summary>
    public long Live { get; private set; }

    /// <summary>The deleting volume holding <see cref="DoomedKey"/>.</summary>
    public long Doomed { get; private set; }

    /// <summary>Registers the two volumes and stores <see cref="DoomedKey"/> in the doomed one; the caller commits.</summary>
    public async Task SetUpVolumesAsync(IBlockWriter session)
    {
        Live = await session.RegisterVolumeAsync("live.zip", VolumeState.Uploaded);
        Doomed = await session.RegisterVolumeAsync("doomed.zip", VolumeState.Uploaded);
        Rows[DoomedKey] = ((await session.SelectXorInsertAsync(DoomedKey, Doomed)).Id, true);
        await session.SetVolumeStateAsync(Doomed, VolumeState.Deleting);
    }

    /// <summary>
    /// Takes the write step <paramref name="what"/> (0-99) names when it is below 68: a span (under 30), a one-call file
    /// (under 60) or one block; returns false for the steps the test takes itself.
    /// </summary>
    public async Task<bool> TryWriteStepAsync(int what, Random random, IBlockWriter w, IBlockReader r, string trace)
    {
        if (what < 30)
        {
            await SpanAsync(random, w, trace);
        }
        else if (what < 60)
        {
            await FileAsync(random, w, r, trace);
        }
        else if (what < 68)
        {
            var key = Key(random);
            Apply([key], [await w.SelectXorInsertAsync(key, Live)], trace);
        }
        else
        {
            return false;
        }

        return true;
    }

    /// <summary>Deletes a blockset the model holds, drawn at random.</summary>
    public async Task DeleteBlocksetAsync(Random random, IBlockWriter w)
    {
        var id = Blocksets.Keys.ElementAt(random.Next(Blocksets.Count));
        await w.DeleteBlocksetAsync(id);
        Blocksets.Remove(id);
    }

    /// <summary>Collects: every block no blockset references goes.</summary>
    public async Task CollectAsync(IBlockWriter w)
    {
        await w.DeleteUnreferencedBlocksAsync();
        var referenced = Blocksets.Values.SelectMany(k => k).ToHashSet();
        foreach (var key in Rows.Keys.Where(k => !referenced.Contains(k)).ToList())
        {
            Rows.Remove(key);
        }
    }

    public static BlockKey[] Keys(Random random)
    {
        var count = new[] { 1, 2, 15, 16, 17, 32, 33 }[random.Next(7)];
        return Enumerable.Range(0, count).Select(_ => Key(random)).ToArray();
    }

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

    /// <summary>Every block of the universe and the doomed one is found as the model says, and the counts match.</summary>
    public async Task AssertMatchesAsync(IBlockReader session, string trace)
    {
        foreach (var key in Enumerable.Range(0, Universe).Select(i => TestData.Block(i, 100)).Append(DoomedKey))
        {
            var expected = Rows.TryGetValue(key, out var row) ? row.Id : (long?)null;
            Assert.True(expected == await session.FindBlockAsync(key), $"{trace}: block {key.Hash} should be {expected?.ToString() ?? "missing"}.");
        }

        var counts = await session.GetCountsAsync();
        Assert.True(
            new BlockDbCounts(Rows.Count, Blocksets.Count, Blocksets.Values.Sum(k => k.Length)) == counts,
            $"{trace}: counts {counts}, model ({Rows.Count}, {Blocksets.Count}).");
    }

    private static BlockKey Key(Random random) => TestData.Block(random.Next(Universe), 100);

    /// <summary>A span select-xor-insert, one time in ten to the deleting volume (refused when it would create a block there).</summary>
    private async Task SpanAsync(Random random, IBlockWriter w, string trace)
    {
        var keys = Keys(random);
        var toDoomed = random.Next(10) == 0;
        var results = new SelectXorInsertResult[keys.Length];
        if (toDoomed && keys.Any(k => !Rows.ContainsKey(k)))
        {
            await Assert.ThrowsAsync<BlockDbConflictException>(async () => await w.SelectXorInsertManyAsync(keys, results, Doomed));
        }
        else
        {
            var created = await w.SelectXorInsertManyAsync(keys, results, toDoomed ? Doomed : Live);
            Assert.Equal(Apply(keys, results, trace), created);
        }
    }

    /// <summary>A one-call file, one time in ten with the doomed block inside (a conflict), one in ten with a length past the largest.</summary>
    private async Task FileAsync(Random random, IBlockWriter w, IBlockReader r, string trace)
    {
        var keys = Keys(random).ToList();
        var refusal = random.Next(10);
        if (refusal == 0)
        {
            keys.Insert(random.Next(keys.Count + 1), DoomedKey);
        }
        else if (refusal == 1)
        {
            keys.Add(TestData.Block(5_000 + random.Next(3), long.MaxValue));
        }

        var results = new SelectXorInsertResult[keys.Count];
        if (keys.Any(k => Rows.TryGetValue(k, out var row) && row.Doomed))
        {
            await Assert.ThrowsAsync<BlockDbConflictException>(async () => await w.AddBlocksetAsync(keys.ToArray(), results, volumeId: Live));
        }
        else if (refusal == 1)
        {
            await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await w.AddBlocksetAsync(keys.ToArray(), results, volumeId: Live));
        }
        else
        {
            var id = await w.AddBlocksetAsync(keys.ToArray(), results, volumeId: Live);
            Apply([.. keys], results, trace);
            Blocksets[id] = [.. keys];
            Assert.Equal(results.Select(b => b.Id), (await r.ListBlocksetBlocksAsync(id)).Select(b => b.BlockId));
        }
    }
}
