using BlockDb.Bench.Model;
using MathNet.Numerics.Statistics;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Summarizes repetitions with MathNet.Numerics: median, min and max of ops/s, CV (sample standard deviation
/// over mean), and per-op latency quantiles (p50, p99; SortedArrayStatistics.Quantile, R-8, the
/// median-unbiased estimator) per repetition, reported as the median over repetitions; max is the largest sample.
/// </summary>
internal static class Summarizer
{
    public static ResultSummary Summarize(RunSpec spec, IReadOnlyList<RepetitionResult> reps)
    {
        var ok = reps.Where(r => r.Error is null && r.Ops > 0).ToList();
        var ops = ok.Select(r => r.OpsPerSecond).ToArray();
        var cpu = ok.Where(r => r.CpuNs > 0).Select(r => r.OpsPerCpuSecond).ToArray();
        var p50 = new List<double>();
        var p99 = new List<double>();
        var max = 0.0;
        foreach (var r in ok.Where(r => r.LatenciesNs.Length > 0))
        {
            var sorted = (double[])r.LatenciesNs.Clone();
            Array.Sort(sorted);
            p50.Add(SortedArrayStatistics.Quantile(sorted, 0.50));
            p99.Add(SortedArrayStatistics.Quantile(sorted, 0.99));
            max = Math.Max(max, sorted[^1]);
        }

        return new ResultSummary
        {
            Spec = spec,
            Repetitions = reps,
            MedianOps = ops.Length > 0 ? ops.Median() : 0,
            MinOps = ops.Length > 0 ? ops.Min() : 0,
            MaxOps = ops.Length > 0 ? ops.Max() : 0,
            Cv = ops.Length > 1 ? ops.StandardDeviation() / ops.Mean() : double.NaN,
            MedianCpuOps = cpu.Length > 0 ? cpu.Median() : 0,
            CpuCv = cpu.Length > 1 ? cpu.StandardDeviation() / cpu.Mean() : double.NaN,
            MedianUnits = ok.Count > 0 ? ok.Select(r => r.UnitsPerSecond).Median() : 0,
            P50Us = p50.Count > 0 ? p50.Median() / 1000 : double.NaN,
            P99Us = p99.Count > 0 ? p99.Median() / 1000 : double.NaN,
            MaxUs = max / 1000,
            SqliteVersion = string.Join("/", reps.Select(r => r.SqliteVersion).Where(v => v.Length > 0).Distinct()),
            AppliedPragmas = reps.Select(r => r.AppliedPragmas).FirstOrDefault(p => p.Length > 0) ?? string.Empty,
            MissesPerOp = PerOp(ok, c => c.Misses),
            WritesPerOp = PerOp(ok, c => c.Writes),
            KeyMapBytes = ok.Select(r => r.KeyMapBytes).DefaultIfEmpty(0).Max(),
        };
    }

    private static double PerOp(List<RepetitionResult> reps, Func<SqliteCacheStats, long> counter)
    {
        var values = reps.Where(r => r.Cache is not null && r.Ops > 0).Select(r => counter(r.Cache!.Value) / (double)r.Ops).ToArray();
        return values.Length > 0 ? values.Median() : double.NaN;
    }

    /// <summary>
    /// Sets each summary's ratios: to the C same-design baseline of the same configuration (the same read-batching
    /// setting) and to the C plain limit (which has none). The same-design baseline gets its ratio to the plain limit:
    /// what BlockDb's design costs in C.
    /// </summary>
    public static void SetRatios(IReadOnlyCollection<ResultSummary> summaries)
    {
        var baselines = summaries.Where(s => s.Spec.IsNative && s.MedianOps > 0 && !s.Failed)
            .ToDictionary(s => s.Spec.ConfigKey + "|" + s.Spec.Provider);
        static double Ratio(double value, double baseline) => value > 0 && baseline > 0 ? value / baseline : double.NaN;
        foreach (var s in summaries)
        {
            if (!s.Spec.IsNative && baselines.TryGetValue(SameKey(s.Spec), out var same))
            {
                s.RatioToNative = Ratio(s.MedianOps, same.MedianOps);
                s.CpuRatioToNative = Ratio(s.MedianCpuOps, same.MedianCpuOps);
            }

            if (!s.Spec.IsPlain && baselines.TryGetValue(PlainKey(s.Spec), out var plain))
            {
                s.RatioToPlain = Ratio(s.MedianOps, plain.MedianOps);
                s.CpuRatioToPlain = Ratio(s.MedianCpuOps, plain.MedianCpuOps);
            }
        }
    }

    /// <summary>The C same-design run a spec compares with: the same configuration on the C loop (which has no api path).</summary>
    private static string SameKey(RunSpec spec) => (spec with { Provider = RunSpec.NativeProvider, Api = ApiPath.Async }).ConfigKey + "|" + RunSpec.NativeProvider;

    /// <summary>The C plain limit a spec compares with: the same configuration without read batching (the plain loop has none).</summary>
    private static string PlainKey(RunSpec spec) => (spec with { Provider = RunSpec.NativePlainProvider, Api = ApiPath.Async, Reads = null }).ConfigKey + "|" + RunSpec.NativePlainProvider;
}
