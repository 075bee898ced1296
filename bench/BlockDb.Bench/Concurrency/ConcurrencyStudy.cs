using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using MathNet.Numerics.Statistics;

namespace BlockDb.Bench.Concurrency;

/// <summary>
/// Seed 002's question on BlockDb: N callers insert new blocks at once. Baseline: one transaction per insert,
/// callers serialised by an async lock on one session (Duplicati's pattern). Grouped: the shared session,
/// whose writer commits whatever is queued as one transaction and acknowledges each insert after its commit.
/// Every call is timed from the caller's side (queueing, lock wait and commit included).
/// </summary>
internal static class ConcurrencyStudy
{
    public const string Baseline = "one transaction per insert";
    public const string Grouped = "group commit";

    public static async Task<IReadOnlyList<ConcurrencyResult>> RunAsync(ConcurrencySettings settings, string workFolder, Action<string> progress)
    {
        Directory.CreateDirectory(workFolder);
        var results = new List<ConcurrencyResult>();
        var keyBase = 0L;
        foreach (var sync in settings.SyncModes)
        {
            foreach (var callers in settings.Callers)
            {
                foreach (var mode in new[] { Baseline, Grouped })
                {
                    foreach (var provider in settings.Providers)
                    {
                        var ops = RoundUp(mode == Grouped ? settings.GroupedOps : settings.BaselineOps, callers);
                        var reps = new List<(double OpsPerSecond, double[] Latencies, double WritesPerCommit)>();
                        string version = "?";
                        for (var rep = 0; rep < settings.Repetitions; rep++)
                        {
                            var hashes = Hashes(keyBase, ops);
                            keyBase += ops;
                            var path = Path.Combine(workFolder, "concurrency.db");
                            DeleteDatabase(path);
                            var options = new BlockDbOptions { Provider = provider, DataSource = path, Batching = { CommitEvery = 1 } };
                            options.Pragmas.Synchronous = sync;
                            await using var db = BlockDatabase.Open(options);
                            version = db.EngineVersion;
                            reps.Add(mode == Grouped ? await RunGroupedAsync(db, callers, hashes) : await RunBaselineAsync(db, callers, hashes));
                            progress($"{provider} synchronous={sync} callers={callers} {mode}: {reps[^1].OpsPerSecond:N0} ops/s");
                        }

                        results.Add(Summarize(provider, version, sync, callers, mode, ops, reps));
                    }
                }
            }
        }

        DeleteDatabase(Path.Combine(workFolder, "concurrency.db"));
        return results;
    }

    private static async Task<(double, double[], double)> RunBaselineAsync(IBlockDatabase db, int callers, string[] hashes)
    {
        await using var session = await db.OpenSessionAsync();
        using var gate = new SemaphoreSlim(1);
        var (opsPerSecond, latencies) = await RunCallersAsync(callers, hashes, async hash =>
        {
            await gate.WaitAsync();
            try
            {
                await session.SelectXorInsertAsync(BlockKey.Parse(hash, 4096));
            }
            finally
            {
                gate.Release();
            }
        });
        return (opsPerSecond, latencies, 1.0);
    }

    private static async Task<(double, double[], double)> RunGroupedAsync(IBlockDatabase db, int callers, string[] hashes)
    {
        await using var shared = db.OpenSharedSession();
        var (opsPerSecond, latencies) = await RunCallersAsync(callers, hashes, hash => shared.SelectXorInsertAsync(BlockKey.Parse(hash, 4096)).AsTask());
        return (opsPerSecond, latencies, shared.AcknowledgedWrites / (double)Math.Max(1, shared.CommittedBatches));
    }

    /// <summary>Starts the callers together; each inserts its share of the keys one after another, timing every call.</summary>
    private static async Task<(double OpsPerSecond, double[] Latencies)> RunCallersAsync(int callers, string[] hashes, Func<string, Task> insert)
    {
        var latencies = new double[hashes.Length];
        var per = hashes.Length / callers;
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, callers).Select(c => Task.Run(async () =>
        {
            for (var i = c * per; i < (c + 1) * per; i++)
            {
                var start = Stopwatch.GetTimestamp();
                await insert(hashes[i]);
                latencies[i] = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
            }
        })));
        return (hashes.Length / clock.Elapsed.TotalSeconds, latencies);
    }

    private static ConcurrencyResult Summarize(
        string provider, string version, SynchronousMode sync, int callers, string mode, int ops, List<(double OpsPerSecond, double[] Latencies, double WritesPerCommit)> reps)
    {
        var throughput = reps.Select(r => r.OpsPerSecond).ToArray();
        var p50 = reps.Select(r => Quantile(r.Latencies, 0.50)).Median();
        var p99 = reps.Select(r => Quantile(r.Latencies, 0.99)).Median();
        return new ConcurrencyResult(
            provider, version, sync, callers, mode, ops,
            throughput.Median(), throughput.Min(), throughput.Max(),
            p50, p99, reps.Max(r => r.Latencies.Max()), reps.Select(r => r.WritesPerCommit).Median());
    }

    private static double Quantile(double[] values, double tau)
    {
        var sorted = (double[])values.Clone();
        Array.Sort(sorted);
        return SortedArrayStatistics.Quantile(sorted, tau);
    }

    private static int RoundUp(int ops, int callers) => Math.Max(callers, (ops + callers - 1) / callers * callers);

    private static string[] Hashes(long first, int count) =>
        Enumerable.Range(0, count).Select(i => Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(first + i)))).ToArray();

    private static void DeleteDatabase(string path)
    {
        foreach (var file in new[] { path, path + "-wal", path + "-shm", path + "-journal" })
        {
            File.Delete(file);
        }
    }

    public static string Format(double value) => value.ToString("N0", CultureInfo.InvariantCulture);
}
