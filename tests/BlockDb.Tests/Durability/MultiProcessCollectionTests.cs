using System.Globalization;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Durability;

/// <summary>
/// Delete-then-re-add under the KeyMap layout across processes: several processes (and two databases in this one, so
/// three or more key maps) select-xor-insert the same 200 blocks, add a blockset of them, delete it and collect every
/// unreferenced block, over and over, each process killed with SIGKILL at the end. A deleted block must never be
/// returned as found with another block's content, a re-added block must get one row, and the file must check clean.
/// </summary>
public sealed class MultiProcessCollectionTests(ITestOutputHelper output) : IDisposable
{
    private static readonly TimeSpan Duration = TimeSpan.FromSeconds(6);
    private static readonly TimeSpan LifeDuration = TimeSpan.FromSeconds(12);
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Processes_that_delete_collect_and_readd_the_same_blocks_never_duplicate_nor_confuse_them(string provider)
    {
        var path = _folder.File("churn.db");
        var options = new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = BlockLayout.KeyMap }, Batching = { CommitEvery = 0 }, Pragmas = { BusyTimeout = 5000 } };
        await using (BlockDatabase.Open(options))
        {
            // Created once, before the processes race for it.
        }

        var children = Enumerable.Range(0, 3)
            .Select(i => new ChildProcess("churn", path, ProviderCatalog.SqliteNames[i % ProviderCatalog.SqliteNames.Count], i.ToString(CultureInfo.InvariantCulture)))
            .ToList();
        var wrong = new List<string>();
        var rounds = 0;
        try
        {
            await Task.WhenAll(children.Select(c => c.Ready.WaitAsync(TimeSpan.FromSeconds(60))));
            await using var a = BlockDatabase.Open(options);
            await using var b = BlockDatabase.Open(options);
            var until = DateTime.UtcNow + Duration;
            await Task.WhenAll(new[] { a, b }.Select((db, i) => Task.Run(async () =>
            {
                await using var session = await db.OpenSessionAsync();
                var random = new Random(100 + i);
                while (DateTime.UtcNow < until)
                {
                    try
                    {
                        await Churn.RoundAsync(session, random, line =>
                        {
                            lock (wrong)
                            {
                                wrong.Add(line);
                            }
                        });
                        Interlocked.Increment(ref rounds);
                    }
                    catch (BlockDbException e) when (e.IsTransient || e is BlockDbBatchRolledBackException or BlockNotFoundException)
                    {
                        await session.RollbackAsync();
                    }
                }
            })));
        }
        finally
        {
            foreach (var child in children)
            {
                child.Kill();
            }
        }

        var childLines = children.SelectMany(c => c.Lines).ToList();
        wrong.AddRange(childLines.Where(l => l.StartsWith("WRONG", StringComparison.Ordinal) || l.StartsWith("stderr", StringComparison.Ordinal)));
        var childRounds = childLines.Count(l => l.StartsWith("ROUND", StringComparison.Ordinal));
        foreach (var child in children)
        {
            child.Dispose();
        }

        await using var checkDb = BlockDatabase.Open(options);
        var check = await checkDb.CheckAsync();
        output.WriteLine($"{provider}: {rounds} rounds in this process, {childRounds} in 3 child processes; final file {check.Counts}, {check.DuplicateGroups} duplicate groups.");
        Assert.Empty(wrong);
        Assert.True(check.IsClean, check.ToString());
        Assert.True(rounds > 0 && childRounds > 0, $"too little work: {rounds} and {childRounds} rounds");

        // Every block once more, through a fresh map: one row each, at the ID the file holds.
        await using var session = await checkDb.OpenSessionAsync();
        for (var k = 0; k < Churn.Keys; k++)
        {
            var first = await session.SelectXorInsertAsync(BlockKey.Parse(Churn.Hash(k), 10));
            Assert.Equal(first.Id, (await session.SelectXorInsertAsync(BlockKey.Parse(Churn.Hash(k), 10))).Id);
        }

        await session.CommitAsync();
        Assert.Equal(Churn.Keys, (await session.GetCountsAsync()).Blocks);
    }
    public static TheoryData<string, BlockLayout> LifeCases() => new()
    {
        { ProviderCatalog.PInvoke, BlockLayout.KeyMap },
        { ProviderCatalog.MicrosoftData, BlockLayout.KeyMap },
        { ProviderCatalog.SystemData, BlockLayout.KeyMap },
        { ProviderCatalog.PInvoke, BlockLayout.TextHash },
        { ProviderCatalog.MicrosoftData, BlockLayout.BlobHash },
    };

    /// <summary>
    /// Backups that must survive a collector: three writer processes and a writer in this process (its key map lives
    /// through the whole run) back up files from a pool of 300 blocks, each block recorded in the writer's volume,
    /// while a collector process deletes blocksets, retires volumes (Deleting, collect, Deleted) and collects every
    /// unreferenced block. A writer and the collector are killed with SIGKILL midway and replaced, the rest at the end.
    /// Afterwards: no duplicate (Hash, Size), no entry naming a missing block, no blockset whose blocks do not add up to
    /// its length, every acknowledged pinned blockset (the collector spares them) intact and readable, and this
    /// process's key map agreeing with the table.
    /// </summary>
    [Theory]
    [MemberData(nameof(LifeCases))]
    public async Task Acknowledged_blocksets_survive_writers_and_a_collector_that_delete_collect_and_retire_volumes_across_killed_processes(string provider, BlockLayout layout)
    {
        var path = _folder.File("life.db");
        var options = LifeChurn.Options(provider, path);
        options.Index.Layout = layout;
        await using (BlockDatabase.Open(options))
        {
            // Created once, before the processes race for it.
        }

        var names = ProviderCatalog.SqliteNames;
        var processes = new List<ChildProcess>();
        ChildProcess Start(string mode, int seed)
        {
            var child = new ChildProcess(mode, path, names[seed % names.Count], seed.ToString(CultureInfo.InvariantCulture));
            lock (processes)
            {
                processes.Add(child);
            }

            return child;
        }

        var wrong = new List<string>();
        var acked = new List<(int Seed, int N, long Id)>();
        var inProcessAcks = 0;
        await using var db = BlockDatabase.Open(options);
        try
        {
            var first = new[] { Start("life-writer", 1), Start("life-writer", 2), Start("life-writer", 3), Start("life-collector", 10) };
            await Task.WhenAll(first.Select(c => c.Ready.WaitAsync(TimeSpan.FromSeconds(60))));
            using var stop = new CancellationTokenSource(LifeDuration);
            var inProcess = Task.Run(async () =>
            {
                await using var session = await db.OpenSessionAsync();
                await LifeChurn.WriteForeverAsync(session, 0, line =>
                {
                    lock (wrong)
                    {
                        if (line.StartsWith("ACK", StringComparison.Ordinal))
                        {
                            var f = line.Split(' ');
                            acked.Add((int.Parse(f[1], CultureInfo.InvariantCulture), int.Parse(f[2], CultureInfo.InvariantCulture), long.Parse(f[3], CultureInfo.InvariantCulture)));
                            inProcessAcks++;
                        }
                        else
                        {
                            wrong.Add(line);
                        }
                    }
                }, stop.Token);
            });

            // Midway: kill a writer and the collector while they work, and start others in their place.
            await Task.Delay(LifeDuration / 3);
            first[0].Kill();
            await Start("life-writer", 4).Ready.WaitAsync(TimeSpan.FromSeconds(60));
            await Task.Delay(LifeDuration / 3);
            first[3].Kill();
            await Start("life-collector", 11).Ready.WaitAsync(TimeSpan.FromSeconds(60));
            await inProcess;
        }
        finally
        {
            foreach (var child in processes)
            {
                child.Kill();
            }
        }

        var lines = processes.SelectMany(c => c.Lines).ToList();
        foreach (var child in processes)
        {
            child.Dispose();
        }

        wrong.AddRange(lines.Where(l => l.StartsWith("WRONG", StringComparison.Ordinal) || l.StartsWith("stderr", StringComparison.Ordinal)));
        foreach (var f in lines.Where(l => l.StartsWith("ACK", StringComparison.Ordinal)).Select(l => l.Split(' ')))
        {
            acked.Add((int.Parse(f[1], CultureInfo.InvariantCulture), int.Parse(f[2], CultureInfo.InvariantCulture), long.Parse(f[3], CultureInfo.InvariantCulture)));
        }

        var offered = lines.Count(l => l.StartsWith("DELETING", StringComparison.Ordinal));
        var rounds = lines.Count(l => l.StartsWith("ROUND", StringComparison.Ordinal));
        var collections = lines.Where(l => l.StartsWith("COLLECTED", StringComparison.Ordinal)).Select(l => l.Split(' ')).ToList();
        var (collected, retired) = (collections.Sum(f => long.Parse(f[1], CultureInfo.InvariantCulture)), collections.Sum(f => int.Parse(f[2], CultureInfo.InvariantCulture)));
        Assert.Empty(wrong);

        // The file: clean, no duplicate block, no entry naming a missing block, volumes consistent.
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
        using (var raw = new RawSql(path))
        {
            Assert.Equal(0, raw.Scalar("""SELECT COUNT(*) FROM (SELECT 1 FROM "Block" GROUP BY "Hash", "Size" HAVING COUNT(*) > 1)"""));
            Assert.Equal(0, raw.Scalar("""SELECT COUNT(*) FROM "BlocksetEntry" E WHERE NOT EXISTS (SELECT 1 FROM "Block" B WHERE B."ID" = E."BlockID")"""));
            Assert.Equal(0, raw.Scalar("""SELECT COUNT(*) FROM "Block" B JOIN "Remotevolume" V ON V."ID" = B."VolumeID" WHERE V."State" = 'Deleted'"""));

            // A blockset whose entry names another block than the one it was written with shows as a wrong length (every
            // block of the pool has its own size).
            Assert.Equal(0, raw.Scalar("""SELECT COUNT(*) FROM "Blockset" S WHERE S."Length" <> (SELECT COALESCE(SUM(B."Size"), 0) FROM "BlocksetEntry" E JOIN "Block" B ON B."ID" = E."BlockID" WHERE E."BlocksetID" = S."ID")"""));
        }

        // Every acknowledged pinned blockset (never deleted, so its ID is never freed): its length, full hash and blocks in order.
        await using var session = await db.OpenSessionAsync();
        var kept = 0;
        foreach (var (seed, n, id) in acked.Where(a => LifeChurn.IsPinned(LifeChurn.FullHash(a.Seed, a.N))))
        {
            var keys = LifeChurn.File(seed, n);
            var blockset = await session.GetBlocksetAsync(id);
            Assert.Equal((keys.Sum(LifeChurn.Size), LifeChurn.FullHash(seed, n), keys.Length), (blockset.Length, blockset.FullHash, blockset.BlockCount));
            Assert.Equal(
                keys.Select((k, i) => (i, LifeChurn.Hash(k), LifeChurn.Size(k))),
                (await session.ListBlocksetBlocksAsync(id)).Select(b => (b.Index, b.Block.Hash.ToString(), b.Block.Size)));
            kept++;
        }

        // This process's key map, which lived through the churn, agrees with the table: every block found at its row's
        // ID, every absent block a miss; a select-xor-insert of each then adds one row per missing block, none twice.
        var table = new Dictionary<(string, long), long>();
        await foreach (var block in db.EnumerateBlocksAsync())
        {
            table.Add((block.Block.Hash.ToString(), block.Block.Size), block.Id);
        }

        for (var k = 0; k < LifeChurn.Keys; k++)
        {
            Assert.Equal(table.TryGetValue((LifeChurn.Hash(k), LifeChurn.Size(k)), out var id) ? (long?)id : null, await session.FindBlockAsync(BlockKey.Parse(LifeChurn.Hash(k), LifeChurn.Size(k))));
        }

        for (var k = 0; k < LifeChurn.Keys; k++)
        {
            var added = await session.SelectXorInsertAsync(BlockKey.Parse(LifeChurn.Hash(k), LifeChurn.Size(k)));
            Assert.Equal(added.Id, (await session.SelectXorInsertAsync(BlockKey.Parse(LifeChurn.Hash(k), LifeChurn.Size(k)))).Id);
        }

        await session.CommitAsync();
        Assert.Equal(LifeChurn.Keys, (await session.GetCountsAsync()).Blocks);
        Assert.True((await db.CheckAsync()).IsClean);
        output.WriteLine($"{provider} {layout}: {acked.Count} blocksets acknowledged ({inProcessAcks} in this process), {kept} pinned ones checked intact, {offered} deletions, {rounds} collector rounds collected {collected} blocks and retired {retired} volumes; {check.Counts}.");
        Assert.True(inProcessAcks > 0 && acked.Count > inProcessAcks && rounds > 0 && kept > 0 && collected > 0 && retired > 0, $"too little work: {acked.Count} acks ({inProcessAcks} here), {rounds} rounds, {kept} kept, {collected} blocks collected, {retired} volumes retired");
    }
}
