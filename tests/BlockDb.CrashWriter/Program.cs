using System.Security.Cryptography;
using BlockDb;
using BlockDb.Drivers;

// Usage:
//   write <db> <provider> <tasks>   write blocksets from <tasks> concurrent tasks through the shared repository;
//                                    print "ACK <task> <n> <blocksetId>" once each is acknowledged (committed).
//   lock <db> <provider> <ms>       hold an exclusive lock on <db> for <ms> milliseconds, printing "LOCKED".
//   pg-xor <connection> <seed> <ops> select-xor-insert on a PostgreSQL index from four tasks (PgXorWriter).
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
