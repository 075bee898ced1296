using System.Diagnostics;
using BlockDb.Bench.Data;

namespace BlockDb.Bench.Server;

/// <summary>
/// <c>server --tasks 1 4 16 [--files N]</c>: the shared session under concurrent writers, the case PostgreSQL's gathered
/// writes serve (issue 25 item 4). Part 1: new-block select-xor-inserts from 1, 4, 16 tasks on one shared session, each
/// engine, with the commits per call (the shared session's <c>CommittedBatches</c> over the calls). Part 2, the indexing
/// run: <c>N</c> files, each one <c>AddBlocksetAsync</c> call of its blocks (1 to 8 blocks, every fourth file
/// repeating the previous file's blocks), from 8 tasks on one shared session, PostgreSQL against the SQLite provider,
/// with the ratio of their times.
/// </summary>
internal static class GatheringStudy
{
    public const int IndexingTasks = 8;

    public static async Task RunAsync(ServerStudy.Settings s, int[] tasks, int files, TextWriter output)
    {
        output.WriteLine($"# Shared session, gathered writers: {s.Ops:N0} new blocks per row, SQLite provider {s.SqliteProvider}, {Environment.ProcessorCount} cores");
        output.WriteLine();
        output.WriteLine("| tasks | engine | writes/s | p50 µs | p99 µs | max µs | commits per call |");
        output.WriteLine("|---|---|---|---|---|---|---|");
        foreach (var engine in new[] { "PostgreSql", s.SqliteProvider })
        {
            foreach (var n in tasks)
            {
                using var place = new ServerStudy.Place(s, engine);
                await using var db = place.Open();
                await using var shared = db.OpenSharedSession();
                var perTask = s.Ops / n;
                var result = await RunTasksAsync(n, perTask, async (t, i) =>
                    await shared.SelectXorInsertAsync(new BlockKey(BlockHashes.Binary(5, HashDomain.Stream, ((long)t * perTask) + i), ServerWorkloads.BlockSize)));
                output.WriteLine($"{result.Row($"{n} | {db.Engine}")} {(double)shared.CommittedBatches / result.Ops:0.00} |");
                output.Flush();
            }
        }

        if (files <= 0)
        {
            return;
        }

        output.WriteLine();
        output.WriteLine($"## Indexing run: {files:N0} files, one call each (AddBlocksetAsync), {IndexingTasks} tasks, one shared session");
        output.WriteLine();
        output.WriteLine("| engine | seconds | files/s | p50 µs | p99 µs | commits per file |");
        output.WriteLine("|---|---|---|---|---|---|");
        var seconds = new Dictionary<string, double>();
        foreach (var engine in new[] { "PostgreSql", s.SqliteProvider })
        {
            using var place = new ServerStudy.Place(s, engine);
            await using var db = place.Open();
            await using var shared = db.OpenSharedSession();
            var perTask = (files + IndexingTasks - 1) / IndexingTasks;
            var result = await RunTasksAsync(IndexingTasks, perTask, async (t, i) =>
            {
                var file = ((long)t * perTask) + i;
                if (file >= files)
                {
                    return;
                }

                var keys = FileBlocks(file);
                await shared.AddBlocksetAsync(keys, new SelectXorInsertResult[keys.Length], BlockHashes.Binary(6, HashDomain.FullHash, file));
            });
            result = result with { Ops = files };
            seconds[engine] = result.Seconds;
            output.WriteLine($"| {db.Engine} | {result.Seconds:0.00} | {result.PerSecond:N0} | {result.P50:N0} | {result.P99:N0} | {(double)shared.CommittedBatches / files:0.00} |");
            output.Flush();
        }

        output.WriteLine();
        output.WriteLine($"PostgreSQL / {s.SqliteProvider} time: {seconds["PostgreSql"] / seconds[s.SqliteProvider]:0.00}x");
    }

    /// <summary>File <paramref name="file"/>'s blocks: 1 to 8, new, except that every fourth file has the previous file's blocks.</summary>
    private static BlockKey[] FileBlocks(long file)
    {
        var source = file % 4 == 3 ? file - 1 : file;
        var count = 1 + (int)(source % 8);
        var keys = new BlockKey[count];
        for (var b = 0; b < count; b++)
        {
            keys[b] = new BlockKey(BlockHashes.Binary(6, HashDomain.Stream, (source * 8) + b), ServerWorkloads.BlockSize);
        }

        return keys;
    }

    private static async Task<Percentiles> RunTasksAsync(int tasks, int perTask, Func<int, int, Task> call)
    {
        var latencies = new List<double>[tasks];
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, tasks).Select(t => Task.Run(async () =>
        {
            var own = latencies[t] = new List<double>(perTask);
            for (var i = 0; i < perTask; i++)
            {
                var start = clock.Elapsed.TotalMicroseconds;
                await call(t, i);
                own.Add(clock.Elapsed.TotalMicroseconds - start);
            }
        })));
        return Percentiles.Of((long)tasks * perTask, clock.Elapsed.TotalSeconds, [.. latencies.SelectMany(l => l)]);
    }
}
