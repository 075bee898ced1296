using System.Security.Cryptography;
using BlockDb;
using BlockDb.Drivers;
using BlockDb.Opening;

// Usage:
//   write <db> <provider> <tasks>   write blocksets from <tasks> concurrent tasks through the shared session;
//                                    print "ACK <task> <n> <blocksetId>" once each is acknowledged (committed).
//   lock <db> <provider> <ms>       hold an exclusive lock on <db> for <ms> milliseconds, printing "LOCKED".
//   churn <db> <provider> <seed>    delete-then-re-add forever (KeyMap): select-xor-insert a few of 200 blocks, add a
//                                    blockset of them, delete it, collect the unreferenced blocks; print "WRONG ..."
//                                    when an ID held another block, "ROUND <n>" after each committed round.
//   life-writer <db> <provider> <seed>  back up file after file (LifeChurn): select-xor-insert its blocks into the
//                                    writer's volume, add its blockset, commit; print "ACK <seed> <n> <blocksetId>" once
//                                    committed, "WRONG ..." when an ID held another block.
//   life-collector <db> <provider> <seed>  delete blocksets, set volumes Deleting, collect them and every unreferenced
//                                    block, set them Deleted; print "DELETING <blocksetId>" before each commit that
//                                    may delete it.
//   pg-xor <connection> <seed> <ops> select-xor-insert on a PostgreSQL index from four tasks (PgXorWriter).
//   snapshot <db> <provider> <seed>  select-xor-insert 2,000 blocks (1,000 shared by every seed, 1,000 of its own),
//                                    print "READY", wait until <db>.go exists, then dispose (writing the key-map
//                                    snapshot at the same moment as other processes) and print "DONE".
//   dup-shared / dup-writer / blockdb-beside: the Duplicati durability tests' children (DuplicatiWriters).
//   import <db> <provider> <count>  bulk-import blocks 0..count-1 (ImportTests.Block) in transactions of 5,000, for
//                                    ever (the test kills it); print "COMMITTED <created> <read>" after each.
if (args is ["pg-xor", var connectionString, var seed, var ops])
{
    // Many writer processes on one PostgreSQL server (PostgreSqlServerTests).
    return await PgXorWriter.RunAsync(connectionString, int.Parse(seed, System.Globalization.CultureInfo.InvariantCulture), int.Parse(ops, System.Globalization.CultureInfo.InvariantCulture));
}

switch (args)
{
    case ["dup-shared", var sharedPath, var sharedSeed, var sharedFiles]:
        return await DuplicatiWriters.SharedAsync(sharedPath, int.Parse(sharedSeed, System.Globalization.CultureInfo.InvariantCulture), int.Parse(sharedFiles, System.Globalization.CultureInfo.InvariantCulture));
    case ["dup-writer", var writerPath, var writerSeed, var writerFiles]:
        return await DuplicatiWriters.DuplicatiWriterAsync(writerPath, int.Parse(writerSeed, System.Globalization.CultureInfo.InvariantCulture), int.Parse(writerFiles, System.Globalization.CultureInfo.InvariantCulture));
    case ["blockdb-beside", var besidePath, var besideProvider, var besideSeed]:
        return await DuplicatiWriters.BesideAsync(besidePath, besideProvider, int.Parse(besideSeed, System.Globalization.CultureInfo.InvariantCulture));
}

if (args.Length != 4)
{
    Console.Error.WriteLine("usage: write <db> <provider> <tasks> | lock <db> <provider> <ms>");
    return 2;
}

var (mode, path, provider, number) = (args[0], args[1], args[2], int.Parse(args[3], System.Globalization.CultureInfo.InvariantCulture));
if (mode == "lock")
{
    using var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));
    connection.Execute("BEGIN EXCLUSIVE");
    connection.QueryText("SELECT COUNT(*) FROM \"Block\"");
    Console.WriteLine("LOCKED");
    Console.Out.Flush();
    Thread.Sleep(number);
    connection.Execute("ROLLBACK");
    return 0;
}

if (mode == "churn")
{
    await using var churnDb = BlockDatabase.Open(new BlockDbOptions
    {
        Provider = provider,
        DataSource = path,
        Batching = { CommitEvery = 0 },
        Pragmas = { BusyTimeout = 5000 },
    });
    await using var churn = await churnDb.OpenSessionAsync();
    Console.WriteLine("READY");
    Console.Out.Flush();
    var random = new Random(number);
    for (var round = 0; ; round++)
    {
        try
        {
            await Churn.RoundAsync(churn, random, line =>
            {
                Console.WriteLine(line);
                Console.Out.Flush();
            });
            Console.WriteLine($"ROUND {round}");
            Console.Out.Flush();
        }
        catch (BlockDbException e) when (e.IsTransient || e is BlockDbBatchRolledBackException or BlockNotFoundException)
        {
            await churn.RollbackAsync();
        }
    }
}

if (mode is "life-writer" or "life-collector")
{
    await using var lifeDb = BlockDatabase.Open(LifeChurn.Options(provider, path));
    await using var life = await lifeDb.OpenSessionAsync();
    Console.WriteLine("READY");
    Console.Out.Flush();
    void Say(string line)
    {
        Console.WriteLine(line);
        Console.Out.Flush();
    }

    if (mode == "life-writer")
    {
        await LifeChurn.WriteForeverAsync(life, number, Say, CancellationToken.None);
    }
    else
    {
        await LifeChurn.CollectForeverAsync(lifeDb, life, number, Say, CancellationToken.None);
    }

    return 0;
}

if (mode == "snapshot")
{
    var snapshotDb = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Pragmas = { BusyTimeout = 5000 } });
    await using (var session = await snapshotDb.OpenSessionAsync())
    {
        for (var i = 0; i < 2000; i++)
        {
            var key = i < 1000 ? i : (number * 1_000_000) + i;
            await session.SelectXorInsertAsync(BlockKey.Parse(Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(key))), 100 + (i % 7)));
        }
    }

    Console.WriteLine("READY");
    Console.Out.Flush();
    while (!File.Exists(path + ".go"))
    {
        Thread.Sleep(5);
    }

    await snapshotDb.DisposeAsync();
    Console.WriteLine("DONE");
    return 0;
}

if (mode == "import")
{
    await using var importDb = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Pragmas = { BusyTimeout = 5000 } });
    Console.WriteLine("READY");
    Console.Out.Flush();
    var progress = new SyncProgress<ImportProgress>(p =>
    {
        Console.WriteLine($"COMMITTED {p.Created} {p.Read}");
        Console.Out.Flush();
    });
    await importDb.ImportBlocksAsync(ImportInput(number), new ImportOptions { ItemsPerTransaction = 5000, Progress = progress });
    Console.WriteLine("DONE");
    return 0;

    static async IAsyncEnumerable<ImportBlock> ImportInput(int count)
    {
        for (var i = 0; i < count; i++)
        {
            yield return new ImportBlock(new BlockKey(new BlockHash(SHA256.HashData(BitConverter.GetBytes(i))), 100 + (i % 7)));
            if (i % 1000 == 0)
            {
                await Task.Yield();
            }
        }
    }
}

if (mode is "session-wal" or "session-delete")
{
    // One plain session with CommitEvery 0: batches of 1 to 60 select-xor-inserts of Hash(k) (k < 3000, the tests'
    // TestData.Hash), committed one by one; "ACKB <k> <id>" for each block once its batch committed (KilledWriterProcessTests).
    // Opening may meet SQLITE_BUSY past the busy timeout on a loaded machine (in DELETE mode a killed writer's hot
    // journal must be rolled back under an exclusive lock while the others keep committing): a transient error that an
    // engine retries, so this writer retries it too rather than dying.
    IBlockDatabase? opened = null;
    IBlockSession? openedSession = null;
    for (var attempt = 1; openedSession is null; attempt++)
    {
        try
        {
            opened = BlockDatabase.Open(new BlockDbOptions
            {
                Provider = provider,
                DataSource = path,
                Batching = { CommitEvery = 0 },
                Pragmas = { Preset = mode == "session-wal" ? PragmaPreset.Recommended : PragmaPreset.SqliteDefaults, BusyTimeout = 5000 },
            });
            openedSession = await opened.OpenSessionAsync();
        }
        catch (BlockDbException e) when (e.IsTransient && attempt < 20)
        {
            opened?.Dispose();
            opened = null;
        }
    }

    await using var sessionDb = opened!;
    await using var session = openedSession;
    Console.WriteLine("READY");
    Console.Out.Flush();
    var rng = new Random(number);
    var pending = new List<string>();
    while (true)
    {
        try
        {
            var k = rng.Next(3000);
            var r = await session.SelectXorInsertAsync(BlockKey.Parse(Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(k))), 10));
            pending.Add($"{k} {r.Id}");
            if (pending.Count >= 1 + rng.Next(60))
            {
                await session.CommitAsync();
                foreach (var line in pending)
                {
                    Console.WriteLine("ACKB " + line);
                }

                Console.Out.Flush();
                pending.Clear();
            }
        }
        catch (BlockDbException e) when (e.IsTransient || e is BlockDbBatchRolledBackException)
        {
            pending.Clear();
            await session.RollbackAsync();
        }
    }
}

var output = Console.Out;
var gate = new object();
await using var db = BlockDatabase.Open(new BlockDbOptions
{
    Provider = provider,
    DataSource = path,
    GroupCommit = { MaxDelayMilliseconds = 5 },
});
await using var shared = db.OpenSharedSession();
lock (gate)
{
    output.WriteLine("READY");
    output.Flush();
}

await Task.WhenAll(Enumerable.Range(0, number).Select(task => Task.Run(async () =>
{
    for (var n = 0; ; n++)
    {
        var blocks = CrashData.Blocks(task, n);
        foreach (var block in blocks)
        {
            await shared.SelectXorInsertAsync(block);
        }

        var id = await shared.AddBlocksetAsync(blocks, new SelectXorInsertResult[blocks.Length], BlockHash.Parse(CrashData.FullHash(task, n)));
        lock (gate)
        {
            output.WriteLine($"ACK {task} {n} {id}");
            output.Flush();
        }
    }
})));
return 0;

/// <summary>One round of delete-then-re-add, shared by the churn processes and the test that runs beside them.</summary>
public static class Churn
{
    /// <summary>The blocks churned: Hash(k) of 10 bytes for k below this.</summary>
    public const int Keys = 200;

    public static string Hash(int k) => Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(k)));

    /// <summary>
    /// Select-xor-inserts a few blocks, checks each ID holds its block (a block another process collected meanwhile is
    /// fine; another block at that ID is not: <paramref name="report"/> gets "WRONG ..."), adds their blockset, commits,
    /// deletes the blockset, collects every unreferenced block, commits.
    /// </summary>
    public static async Task RoundAsync(IBlockSession session, Random random, Action<string> report)
    {
        var keys = new List<BlockKey>();
        for (var i = 0; i < 1 + random.Next(5); i++)
        {
            var k = random.Next(Keys);
            var found = await session.SelectXorInsertAsync(BlockKey.Parse(Hash(k), 10));
            try
            {
                var block = await session.GetBlockAsync(found.Id);
                if (block.Block.Hash.ToString() != Hash(k) || block.Block.Size != 10)
                {
                    report($"WRONG {k} {found.Id} holds {block.Block}");
                }
            }
            catch (BlockNotFoundException)
            {
                // Collected by another process between the lookup and this read: allowed, the ID is never reused.
            }

            keys.Add(BlockKey.Parse(Hash(k), 10));
        }

        var blockset = await session.AddBlocksetAsync(keys.ToArray(), new SelectXorInsertResult[keys.Count]);
        await session.CommitAsync();
        await session.DeleteBlocksetAsync(blockset);
        await session.DeleteUnreferencedBlocksAsync();
        await session.CommitAsync();
    }
}

/// <summary>
/// Delete-then-re-add with blocksets that must survive (MultiProcessCollectionTests): writers back up files made of blocks
/// from a pool of <see cref="Keys"/>, each recorded in the writer's volume, while a collector deletes blocksets, retires
/// volumes (Deleting, collect, Deleted) and collects every unreferenced block. Shared by the processes and the test.
/// </summary>
public static class LifeChurn
{
    /// <summary>The pool of blocks: Hash(k) of Size(k) bytes for k below this.</summary>
    public const int Keys = 300;

    public static BlockDbOptions Options(string provider, string path) => new()
    {
        Provider = provider,
        DataSource = path,
        Batching = { CommitEvery = 0 },
        Pragmas = { BusyTimeout = 5000 },
    };

    public static string Hash(int k) => Convert.ToBase64String(SHA256.HashData(System.Text.Encoding.UTF8.GetBytes($"life block {k}")));

    public static long Size(int k) => 1 + (k * 37 % 4096);

    /// <summary>The blocks a pinned file draws from (0 to this - 1): the others are never pinned, so they keep being collected and re-added.</summary>
    public const int PinnedKeys = 50;

    /// <summary>
    /// The blocks of writer <paramref name="seed"/>'s file <paramref name="n"/>, in order (1 to 6, repeats allowed); a
    /// pinned file's from the first <see cref="PinnedKeys"/>.
    /// </summary>
    public static int[] File(int seed, int n)
    {
        var random = new Random((seed * 1_000_003) + n);
        var range = IsPinned(FullHash(seed, n)) ? PinnedKeys : Keys;
        return [.. Enumerable.Range(0, 1 + random.Next(6)).Select(_ => random.Next(range))];
    }

    public static string FullHash(int seed, int n) => Convert.ToBase64String(SHA256.HashData(System.Text.Encoding.UTF8.GetBytes($"life file {seed} {n}")));

    /// <summary>
    /// A pinned blockset (about 1 in 32, told by its full hash alone) is never deleted by the collector, so its ID is
    /// never freed: the test checks every acknowledged pinned blockset by ID (others may be deleted and their IDs reused).
    /// </summary>
    public static bool IsPinned(string? fullHash) => fullHash is ['A' or 'B', ..];

    /// <summary>
    /// Backs up one file: select-xor-inserts its blocks into <paramref name="volume"/> (checking each ID holds its block),
    /// adds the blockset and commits. A block in a volume being retired is moved into the writer's volume first, as an
    /// engine that uploads it again would. Returns the blockset ID once committed; throws what the race made fail.
    /// </summary>
    public static async Task<long> WriteFileAsync(IBlockSession session, int seed, int n, long volume, Action<string> report)
    {
        var keys = File(seed, n);
        var ids = new long[keys.Length];
        var blocks = new BlockKey[keys.Length];
        for (var i = 0; i < keys.Length; i++)
        {
            blocks[i] = BlockKey.Parse(Hash(keys[i]), Size(keys[i]));
            var found = await session.SelectXorInsertAsync(blocks[i], volume);
            try
            {
                var block = await session.GetBlockAsync(found.Id);
                if (block.Block.Hash.ToString() != Hash(keys[i]) || block.Block.Size != Size(keys[i]))
                {
                    report($"WRONG {keys[i]} {found.Id} holds {block.Block}");
                }
            }
            catch (BlockNotFoundException)
            {
                // Collected by another process since the lookup: AddBlocksetAsync inserts it again, in this writer's volume.
            }

            ids[i] = found.Id;
        }

        long blockset;
        try
        {
            blockset = await session.AddBlocksetAsync(blocks, new SelectXorInsertResult[blocks.Length], BlockHash.Parse(FullHash(seed, n)), volume);
        }
        catch (BlockDbConflictException)
        {
            // A block lies in a volume being retired: record it again in this writer's volume.
            await session.MoveBlocksAsync(ids, volume);
            blockset = await session.AddBlocksetAsync(blocks, new SelectXorInsertResult[blocks.Length], BlockHash.Parse(FullHash(seed, n)), volume);
        }

        await session.CommitAsync();
        return blockset;
    }

    /// <summary>Backs up file after file, each retried until it commits; prints "ACK seed n blocksetId". <paramref name="cancellationToken"/> stops it between calls, never inside one.</summary>
    public static async Task WriteForeverAsync(IBlockSession session, int seed, Action<string> report, CancellationToken cancellationToken)
    {
        long? volume = null;
        for (var n = 0; !cancellationToken.IsCancellationRequested; n++)
        {
            for (var attempt = 0; attempt < 100 && !cancellationToken.IsCancellationRequested; attempt++)
            {
                try
                {
                    if (volume is null)
                    {
                        volume = await session.RegisterVolumeAsync($"w{seed}-{n}-{attempt}.zip", VolumeState.Uploading, CancellationToken.None);
                        await session.CommitAsync(CancellationToken.None);
                    }

                    var blockset = await WriteFileAsync(session, seed, n, volume.Value, report);
                    report($"ACK {seed} {n} {blockset}");
                    break;
                }
                catch (BlockDbException e) when (e.IsTransient || e is BlockDbBatchRolledBackException or BlockNotFoundException or BlockDbConflictException or VolumeNotFoundException)
                {
                    await session.RollbackAsync(CancellationToken.None);
                    if (e is BlockDbConflictException or VolumeNotFoundException)
                    {
                        volume = null;
                    }
                }
            }
        }
    }

    /// <summary>
    /// One collector round: deletes about 80 % of the blocksets that are not pinned (so most blocks become unreferenced and are collected,
    /// then re-added by the writers), retires up to 3 volumes whose blocks no blockset references (Deleting, collect,
    /// Deleted), then collects every unreferenced block. Prints "DELETING id" before the commit that may delete
    /// blockset id, and "COLLECTED blocks volumes" after the round's commit.
    /// </summary>
    public static async Task CollectRoundAsync(IBlockDatabase db, IBlockSession session, Random random, Action<string> report)
    {
        var blocksets = new List<long>();
        await foreach (var blockset in db.EnumerateBlocksetsAsync())
        {
            if (!IsPinned(blockset.FullHash))
            {
                blocksets.Add(blockset.Id);
            }
        }

        foreach (var id in blocksets.Where(_ => random.Next(10) < 8))
        {
            report($"DELETING {id}");
            try
            {
                await session.DeleteBlocksetAsync(id);
            }
            catch (BlocksetNotFoundException)
            {
                // Deleted by an earlier collector whose process was killed after its commit.
            }
        }

        await session.CommitAsync();
        var retire = new List<long>();
        await foreach (var volume in db.EnumerateVolumesAsync())
        {
            if (volume.State < VolumeState.Deleting && volume.UnreferencedBlocks == volume.Blocks && random.Next(3) == 0)
            {
                retire.Add(volume.Id);
            }
        }

        var retired = 0;
        long collected = 0;
        foreach (var volume in retire.Take(3))
        {
            try
            {
                await session.SetVolumeStateAsync(volume, VolumeState.Deleting);
            }
            catch (BlockDbConflictException)
            {
                // A blockset came to reference one of its blocks since the enumeration.
                continue;
            }

            collected += (await session.DeleteUnreferencedBlocksAsync(volume)).Blocks;
            await session.SetVolumeStateAsync(volume, VolumeState.Deleted);
            retired++;
        }

        collected += (await session.DeleteUnreferencedBlocksAsync()).Blocks;
        await session.CommitAsync();
        report($"COLLECTED {collected} {retired}");
    }

    public static async Task CollectForeverAsync(IBlockDatabase db, IBlockSession session, int seed, Action<string> report, CancellationToken cancellationToken)
    {
        var random = new Random(seed);
        for (var round = 0; !cancellationToken.IsCancellationRequested; round++)
        {
            try
            {
                await CollectRoundAsync(db, session, random, report);
                report($"ROUND {round}");
            }
            catch (BlockDbException e) when (e.IsTransient || e is BlockDbBatchRolledBackException)
            {
                await session.RollbackAsync(CancellationToken.None);
            }
        }
    }
}

/// <summary>The deterministic content of blockset (task, n), shared with the test that checks it.</summary>
public static class CrashData
{
    public static BlockKey[] Blocks(int task, int n) =>
        Enumerable.Range(0, 1 + ((task + n) % 12))
            .Select(i => BlockKey.Parse(Hash($"block {(n * 3) + i} of {task % 3}"), 1 + (((n * 31) + i) % 102_400)))
            .ToArray();

    public static string FullHash(int task, int n) => Hash($"file {task} {n}");

    private static string Hash(string text) => Convert.ToBase64String(SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(text)));
}

/// <summary>Reports on the thread that reports (Progress&lt;T&gt; would post to the thread pool, after the kill).</summary>
internal sealed class SyncProgress<T>(Action<T> report) : IProgress<T>
{
    public void Report(T value) => report(value);
}
