using System.Security.Cryptography;
using BlockDb;
using BlockDb.Drivers;

// Usage:
//   write <db> <provider> <tasks>   write blocksets from <tasks> concurrent tasks through the shared repository;
//                                    print "ACK <task> <n> <blocksetId>" once each is acknowledged (committed).
//   lock <db> <provider> <ms>       hold an exclusive lock on <db> for <ms> milliseconds, printing "LOCKED".
//   churn <db> <provider> <seed>    delete-then-re-add forever (KeyMap): select-xor-insert a few of 200 blocks, add a
//                                    blockset of them, delete it, collect the unreferenced blocks; print "WRONG ..."
//                                    when an ID held another block, "ROUND <n>" after each committed round.
//   pg-xor <connection> <seed> <ops> select-xor-insert on a PostgreSQL index from four tasks (PgXorWriter).
//   import <db> <provider> <count>  bulk-import blocks 0..count-1 (ImportTests.Block) in transactions of 5,000, for
//                                    ever (the test kills it); print "COMMITTED <created> <read>" after each.
if (args is ["pg-xor", var connectionString, var seed, var ops])
{
    // Many writer processes on one PostgreSQL server (PostgreSqlServerTests).
    return await PgXorWriter.RunAsync(connectionString, int.Parse(seed, System.Globalization.CultureInfo.InvariantCulture), int.Parse(ops, System.Globalization.CultureInfo.InvariantCulture));
}

if (args.Length != 4)
{
    Console.Error.WriteLine("usage: write <db> <provider> <tasks> | lock <db> <provider> <ms>");
    return 2;
}

var (mode, path, provider, number) = (args[0], args[1], args[2], int.Parse(args[3], System.Globalization.CultureInfo.InvariantCulture));
if (mode == "lock")
{
    using var connection = BlockDbProviders.Get(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));
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
            yield return new ImportBlock(new BlockHash(SHA256.HashData(BitConverter.GetBytes(i))), 100 + (i % 7));
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
    // TestData.Hash), committed one by one; "ACKB <k> <id>" for each block once its batch committed (AttackTests).
    await using var sessionDb = BlockDatabase.Open(new BlockDbOptions
    {
        Provider = provider,
        DataSource = path,
        Batching = { CommitEvery = 0 },
        Pragmas = { Preset = mode == "session-wal" ? PragmaPreset.Recommended : PragmaPreset.SqliteDefaults, BusyTimeout = 5000 },
    });
    await using var session = await sessionDb.OpenSessionAsync();
    Console.WriteLine("READY");
    Console.Out.Flush();
    var rng = new Random(number);
    var pending = new List<string>();
    while (true)
    {
        try
        {
            var k = rng.Next(3000);
            var r = await session.SelectXorInsertAsync(Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(k))), 10);
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
await using var shared = db.OpenSharedRepository();
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
            await shared.SelectXorInsertAsync(block.Hash, block.Size);
        }

        var id = await shared.AddBlocksetAsync(blocks, CrashData.FullHash(task, n));
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
    public static async Task RoundAsync(IBlockRepository session, Random random, Action<string> report)
    {
        var ids = new List<long>();
        for (var i = 0; i < 1 + random.Next(5); i++)
        {
            var k = random.Next(Keys);
            var found = await session.SelectXorInsertAsync(Hash(k), 10);
            try
            {
                var block = await session.GetBlockAsync(found.Id);
                if (block.Hash != Hash(k) || block.Size != 10)
                {
                    report($"WRONG {k} {found.Id} holds {block.Hash}/{block.Size}");
                }
            }
            catch (BlockNotFoundException)
            {
                // Collected by another process between the lookup and this read: allowed, the ID is never reused.
            }

            ids.Add(found.Id);
        }

        var blockset = await session.AddBlocksetAsync(ids);
        await session.CommitAsync();
        await session.DeleteBlocksetAsync(blockset);
        await session.DeleteUnreferencedBlocksAsync();
        await session.CommitAsync();
    }
}

/// <summary>The deterministic content of blockset (task, n), shared with the test that checks it.</summary>
public static class CrashData
{
    public static BlockKey[] Blocks(int task, int n) =>
        Enumerable.Range(0, 1 + ((task + n) % 12))
            .Select(i => new BlockKey(Hash($"block {(n * 3) + i} of {task % 3}"), 1 + (((n * 31) + i) % 102_400)))
            .ToArray();

    public static string FullHash(int task, int n) => Hash($"file {task} {n}");

    private static string Hash(string text) => Convert.ToBase64String(SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(text)));
}

/// <summary>Reports on the thread that reports (Progress&lt;T&gt; would post to the thread pool, after the kill).</summary>
internal sealed class SyncProgress<T>(Action<T> report) : IProgress<T>
{
    public void Report(T value) => report(value);
}
