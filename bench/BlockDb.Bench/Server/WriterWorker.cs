using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Data;

namespace BlockDb.Bench.Server;

/// <summary>
/// One writer process of the many-writers study: a session that select-xor-inserts <c>ops</c> blocks, a quarter of them
/// drawn from a pool every writer shares (so writers race for the same blocks) and the rest its own, committing every
/// <c>commitEvery</c> writes. A batch the server aborted (a deadlock between two writers' batches, 40P01) is written
/// again, as a backup client would. Prints READY, waits for GO on stdin, then "RESULT ops seconds retries" and writes its
/// per-call latencies (µs, one per line) to <c>latencyFile</c>.
/// </summary>
internal static class WriterWorker
{
    public const int SharedPool = 20_000;

    public static async Task<int> RunAsync(string connectionString, int seed, int ops, int commitEvery, string latencyFile)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = "PostgreSql", ConnectionString = connectionString, Batching = { CommitEvery = commitEvery } });
        await using var session = await db.OpenSessionAsync();
        Console.WriteLine("READY");
        Console.Out.Flush();
        _ = Console.ReadLine();

        var random = new Random(seed);
        var keys = Enumerable.Range(0, ops).Select(i => Key(random, seed, i)).ToArray();
        var latencies = new List<double>(ops);
        var retries = 0;
        var batchStart = 0;
        var clock = Stopwatch.StartNew();
        for (var i = 0; i < ops; i++)
        {
            var start = clock.Elapsed.TotalMicroseconds;
            try
            {
                await session.SelectXorInsertAsync(BlockKey.Parse(keys[i], ServerWorkloads.BlockSize));
            }
            catch (BlockDbException e) when (e.IsTransient)
            {
                // The server chose this batch as a deadlock victim: its writes are gone; write them again.
                retries++;
                i = (e is BlockDbBatchRolledBackException ? batchStart : i) - 1;
                continue;
            }

            latencies.Add(clock.Elapsed.TotalMicroseconds - start);
            if (session.PendingWrites == 0)
            {
                batchStart = i + 1;
            }
        }

        await session.CommitAsync();
        var seconds = clock.Elapsed.TotalSeconds;
        await File.WriteAllLinesAsync(latencyFile, latencies.Select(l => l.ToString("F1", CultureInfo.InvariantCulture)));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT {ops} {seconds:F4} {retries}"));
        return 0;
    }

    /// <summary>A quarter of the keys from the pool every writer shares, the rest this writer's own.</summary>
    public static string Key(Random random, int seed, int i) =>
        random.Next(4) == 0 ? BlockHashes.Of(7, HashDomain.Prefill, random.Next(SharedPool)) : BlockHashes.Of(seed, HashDomain.Stream, i);
}
