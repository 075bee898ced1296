using System.Globalization;
using System.Text;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Reporting;

namespace BlockDb.Bench.Concurrency;

/// <summary>The concurrency study's CSV, Markdown and PNG (drawn with ScottPlot).</summary>
internal static class ConcurrencyReport
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static string Write(ConcurrencySettings settings, IReadOnlyList<ConcurrencyResult> results, IEnumerable<KeyValuePair<string, string>> machine)
    {
        Directory.CreateDirectory(settings.OutputFolder);
        File.WriteAllText(Path.Combine(settings.OutputFolder, "concurrency.csv"), Csv(results));
        var plot = settings.Plots ? Plot(settings.OutputFolder, results) : "Plots skipped.";
        var markdown = Markdown(settings, results, machine, plot);
        File.WriteAllText(Path.Combine(settings.OutputFolder, "concurrency.md"), markdown);
        return markdown;
    }

    private static string Csv(IReadOnlyList<ConcurrencyResult> results)
    {
        var csv = new StringBuilder("provider,sqlite_version,synchronous,callers,mode,ops,ops_per_s_median,ops_per_s_min,ops_per_s_max,p50_ms,p99_ms,max_ms,writes_per_commit\n");
        foreach (var r in results)
        {
            csv.AppendLine(string.Join(',', r.Provider, r.SqliteVersion, r.Sync, r.Callers.ToString(Invariant), $"\"{r.Mode}\"", r.Ops.ToString(Invariant),
                F(r.OpsPerSecond), F(r.OpsPerSecondMin), F(r.OpsPerSecondMax), F(r.P50Ms, "F4"), F(r.P99Ms, "F4"), F(r.MaxMs, "F4"), F(r.WritesPerCommit, "F1")));
        }

        return csv.ToString();
    }

    private static string Markdown(ConcurrencySettings settings, IReadOnlyList<ConcurrencyResult> results, IEnumerable<KeyValuePair<string, string>> machine, string plot)
    {
        var md = new StringBuilder();
        md.AppendLine("# Concurrent inserts: one transaction per insert versus group commit");
        md.AppendLine();
        md.AppendLine("N callers each insert new blocks (SHA-256 keys) into an empty database (Recommended pragmas, `synchronous` as stated). "
            + $"Baseline: one session, callers serialised by an async lock, each insert its own transaction. Group commit: `OpenSharedSession()`, each insert acknowledged after its batch commits. "
            + $"{settings.GroupedOps:N0} grouped / {settings.BaselineOps:N0} baseline inserts per run, {settings.Repetitions} repetitions; ops/s is the median (min–max), latency is per call from the caller's side (median over repetitions of p50 and p99; max over all).");
        md.AppendLine();
        md.AppendLine("| | |");
        md.AppendLine("|---|---|");
        foreach (var (key, value) in machine)
        {
            md.AppendLine($"| {key} | {value} |");
        }

        foreach (var sync in settings.SyncModes)
        {
            md.AppendLine();
            md.AppendLine($"## synchronous={sync.ToString().ToUpperInvariant()}");
            md.AppendLine();
            md.AppendLine("| provider | callers | one txn per insert: ops/s | p50 / p99 / max ms | group commit: ops/s | p50 / p99 / max ms | writes per commit | gain |");
            md.AppendLine("|---|---:|---:|---|---:|---|---:|---:|");
            foreach (var provider in settings.Providers)
            {
                foreach (var callers in settings.Callers)
                {
                    var b = results.FirstOrDefault(r => r.Provider == provider && r.Sync == sync && r.Callers == callers && r.Mode == ConcurrencyStudy.Baseline);
                    var g = results.FirstOrDefault(r => r.Provider == provider && r.Sync == sync && r.Callers == callers && r.Mode == ConcurrencyStudy.Grouped);
                    if (b is null || g is null)
                    {
                        continue;
                    }

                    md.AppendLine($"| {provider} | {callers:N0} | {b.OpsPerSecond:N0} ({b.OpsPerSecondMin:N0}–{b.OpsPerSecondMax:N0}) | {Latency(b)} | {g.OpsPerSecond:N0} ({g.OpsPerSecondMin:N0}–{g.OpsPerSecondMax:N0}) | {Latency(g)} | {g.WritesPerCommit:N1} | {g.OpsPerSecond / b.OpsPerSecond:F1}x |");
                }
            }
        }

        md.AppendLine();
        md.AppendLine(plot);
        return md.ToString();
    }

    private static string Latency(ConcurrencyResult r) => $"{r.P50Ms:F3} / {r.P99Ms:F2} / {r.MaxMs:F1}";

    private static string Plot(string folder, IReadOnlyList<ConcurrencyResult> results)
    {
        var callers = results.Select(r => r.Callers).Distinct().Order().ToList();
        var panels = results.Select(r => r.Sync).Distinct().Select(sync => new PlotReport.Panel(
            $"synchronous={sync.ToString().ToUpperInvariant()}",
            "inserts/s",
            "concurrent callers",
            [.. callers.Select(c => c.ToString("N0", Invariant))],
            [.. results.Where(r => r.Sync == sync).GroupBy(r => (r.Provider, r.Mode)).Select(g => new PlotReport.Series(
                $"{g.Key.Provider}, {g.Key.Mode}",
                [.. callers.Select(c => g.FirstOrDefault(r => r.Callers == c)?.OpsPerSecond ?? double.NaN)],
                Dashed: g.Key.Mode == ConcurrencyStudy.Baseline))],
            Bars: false,
            LogY: true)).ToList();
        try
        {
            PlotReport.Save(Path.Combine(folder, "concurrency.png"), panels);
            return "![inserts per second against concurrent callers](concurrency.png)";
        }
        catch (Exception e) when (e is InvalidOperationException or ArgumentException or IOException or DllNotFoundException or TypeInitializationException)
        {
            return $"Plot failed: {e.Message}";
        }
    }

    private static string F(double value, string format = "F0") => value.ToString(format, Invariant);
}
