using BlockDb.Bench.Model;
using MathNet.Numerics.Statistics;

namespace BlockDb.Bench.Limit;

/// <summary>A median with its range over rounds (NaN when there is no value).</summary>
/// <param name="Median">The median.</param>
/// <param name="Min">The smallest.</param>
/// <param name="Max">The largest.</param>
internal readonly record struct Spread(double Median, double Min, double Max)
{
    public static Spread Of(IEnumerable<double> values)
    {
        var v = values.Where(x => !double.IsNaN(x) && x > 0).ToArray();
        return v.Length == 0 ? new(double.NaN, double.NaN, double.NaN) : new(v.Median(), v.Min(), v.Max());
    }
}

/// <summary>
/// One row of the limit table: a provider (or C loop) on a workload, its ops/s over rounds, and its ratios to each C loop
/// taken per round (this run's ops/s over the C run's of the same workload and round), on wall time and on worker-thread
/// CPU time.
/// </summary>
internal sealed record LimitRow(
    Workload Workload,
    string Provider,
    Spread OpsPerSecond,
    Spread CpuOpsPerSecond,
    Spread ToSame,
    Spread CpuToSame,
    Spread ToPlain,
    Spread CpuToPlain,
    int Rounds);

/// <summary>Pairs each run with the C runs of its workload and round.</summary>
internal static class LimitPairs
{
    public static List<LimitRow> Create(IReadOnlyList<RepetitionResult> results)
    {
        var ok = results.Where(r => !r.Failed && r.Ops > 0).ToList();
        RepetitionResult? C(RepetitionResult r, string provider) =>
            ok.FirstOrDefault(c => c.Spec.Provider == provider && c.Spec.Workload == r.Spec.Workload && c.Repetition == r.Repetition);
        static double Ratio(double value, double baseline) => value > 0 && baseline > 0 ? value / baseline : double.NaN;

        var rows = new List<LimitRow>();
        foreach (var group in ok.GroupBy(r => (r.Spec.Workload, r.Spec.Provider)))
        {
            var runs = group.ToList();
            var same = runs.Select(r => (Run: r, C: C(r, RunSpec.NativeProvider))).Where(p => p.C is not null).ToList();
            var plain = runs.Select(r => (Run: r, C: C(r, RunSpec.NativePlainProvider))).Where(p => p.C is not null).ToList();
            rows.Add(new LimitRow(
                group.Key.Workload,
                group.Key.Provider,
                Spread.Of(runs.Select(r => r.OpsPerSecond)),
                Spread.Of(runs.Select(r => r.OpsPerCpuSecond)),
                Spread.Of(same.Select(p => Ratio(p.Run.OpsPerSecond, p.C!.OpsPerSecond))),
                Spread.Of(same.Select(p => Ratio(p.Run.OpsPerCpuSecond, p.C!.OpsPerCpuSecond))),
                Spread.Of(plain.Select(p => Ratio(p.Run.OpsPerSecond, p.C!.OpsPerSecond))),
                Spread.Of(plain.Select(p => Ratio(p.Run.OpsPerCpuSecond, p.C!.OpsPerCpuSecond))),
                runs.Count));
        }

        return [.. rows.OrderBy(r => LimitStudy.Workloads.ToList().IndexOf(r.Workload)).ThenBy(r => Order(r.Provider))];
    }

    /// <summary>C plain first, then C same design, then the .NET providers (PInvoke, MicrosoftData, SystemData).</summary>
    private static int Order(string provider) => provider switch
    {
        RunSpec.NativePlainProvider => 0,
        RunSpec.NativeProvider => 1,
        "PInvoke" => 2,
        "MicrosoftData" => 3,
        "SystemData" => 4,
        _ => 5,
    };
}
