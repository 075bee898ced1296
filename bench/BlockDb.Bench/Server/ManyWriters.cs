using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Data;

namespace BlockDb.Bench.Server;

/// <summary>
/// The many-writers study: 1, 4, 16 writer processes (<see cref="WriterWorker"/>) on one PostgreSQL index, against
/// SQLite's single writer, where as many tasks share one process's group-commit repository. Each writer does the same
/// select-xor-inserts; aggregate blocks per second and the per-call p50/p99 over every writer.
/// </summary>
internal static class ManyWriters
{
    public static async Task<Percentiles> PostgreSqlAsync(string connectionString, int writers, int ops, int commitEvery, string work)
    {
        Directory.CreateDirectory(work);
        var processes = new List<Process>();
        try
        {
            for (var w = 0; w < writers; w++)
            {
                var start = new ProcessStartInfo("dotnet") { RedirectStandardInput = true, RedirectStandardOutput = true, UseShellExecute = false };
                foreach (var arg in new[] { typeof(ManyWriters).Assembly.Location, "server-worker", connectionString, (100 + w).ToString(CultureInfo.InvariantCulture), ops.ToString(CultureInfo.InvariantCulture), commitEvery.ToString(CultureInfo.InvariantCulture), Path.Combine(work, $"lat{w}.txt") })
                {
                    start.ArgumentList.Add(arg);
                }

                processes.Add(Process.Start(start)!);
            }

            foreach (var p in processes)
            {
                if (await p.StandardOutput.ReadLineAsync() != "READY")
                {
                    throw new InvalidOperationException("a writer process did not start");
                }
            }

            foreach (var p in processes)
            {
                await p.StandardInput.WriteLineAsync("GO");
                await p.StandardInput.FlushAsync();
            }

            double slowest = 0;
            var retries = 0;
            foreach (var p in processes)
            {
                var result = (await p.StandardOutput.ReadLineAsync())?.Split(' ') ?? throw new InvalidOperationException("a writer process failed");
                await p.WaitForExitAsync();
                if (p.ExitCode != 0 || result[0] != "RESULT")
                {
                    throw new InvalidOperationException($"a writer process failed (exit {p.ExitCode})");
                }

                slowest = Math.Max(slowest, double.Parse(result[2], CultureInfo.InvariantCulture));
                retries += int.Parse(result[3], CultureInfo.InvariantCulture);
            }

            var latencies = Enumerable.Range(0, writers).SelectMany(w => File.ReadLines(Path.Combine(work, $"lat{w}.txt"))).Select(l => double.Parse(l, CultureInfo.InvariantCulture)).ToList();
            Retries = retries;
            return Percentiles.Of((long)writers * ops, slowest, latencies);
        }
        finally
        {
            foreach (var p in processes)
            {
                if (!p.HasExited)
                {
                    p.Kill();
                }

                p.Dispose();
            }
        }
    }

    /// <summary>Batches the last PostgreSQL run wrote again after a deadlock.</summary>
    public static int Retries { get; private set; }

    /// <summary>SQLite: one process, <paramref name="writers"/> tasks through the group-commit shared session, the same keys.</summary>
    public static async Task<Percentiles> SqliteAsync(string provider, string path, int writers, int ops)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
        await using var shared = db.OpenSharedSession();
        var latencies = new List<double>[writers];
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, writers).Select(w => Task.Run(async () =>
        {
            var random = new Random(100 + w);
            var keys = Enumerable.Range(0, ops).Select(i => WriterWorker.Key(random, 100 + w, i)).ToArray();
            var own = latencies[w] = new List<double>(ops);
            foreach (var key in keys)
            {
                var start = clock.Elapsed.TotalMicroseconds;
                await shared.SelectXorInsertAsync(BlockKey.Parse(key, ServerWorkloads.BlockSize));
                own.Add(clock.Elapsed.TotalMicroseconds - start);
            }
        })));
        return Percentiles.Of((long)writers * ops, clock.Elapsed.TotalSeconds, [.. latencies.SelectMany(l => l)]);
    }
}
