using System.Globalization;
using System.Text;
using BlockDb.Bench.Model;

namespace BlockDb.Bench.Reporting;

/// <summary>
/// <c>summary.csv</c>: one row per study point (a configuration shared by studies appears once per study);
/// <c>runs.csv</c>: one row per repetition. Invariant culture, RFC 4180 quoting.
/// </summary>
internal static class CsvReport
{
    public static void Write(string folder, SweepPlan plan, IReadOnlyList<ResultSummary> summaries, IEnumerable<RepetitionResult> runs)
    {
        var bySpec = summaries.ToDictionary(s => s.Spec);
        var text = new StringBuilder();
        Line(text, "study", "series", "x", "workload", "op", "provider", "sqlite_version", "size", "pragma", "applied_pragmas", "batch", "threads", "connections", "api",
            "ops", "warmup", "reps", "ops_per_s_median", "ops_per_s_min", "ops_per_s_max", "cv", "noisy", "units_per_s_median", "unit",
            "p50_us", "p99_us", "max_us", "ratio_to_native", "failed", "layout", "cache_misses_per_op", "cache_writes_per_op", "keymap_bytes",
            "reads_per_transaction", "ratio_to_plain", "ops_per_cpu_s_median", "cpu_cv", "cpu_ratio_to_native", "cpu_ratio_to_plain");
        foreach (var p in plan.Points)
        {
            var s = bySpec[p.Spec];
            var spec = s.Spec;
            Line(text, p.Study.ToString().ToLowerInvariant(), p.Series, p.XLabel, WorkloadInfo.Name(spec.Workload), WorkloadInfo.OpDefinition(spec.Workload), spec.Provider,
                s.SqliteVersion, spec.Size.ToString(CultureInfo.InvariantCulture), spec.Pragma, s.AppliedPragmas, RunSpec.BatchLabel(spec.Batch),
                spec.Threads.ToString(CultureInfo.InvariantCulture), spec.Connections.ToString(), spec.Api.ToString(), spec.Ops.ToString(CultureInfo.InvariantCulture),
                spec.Warmup.ToString(CultureInfo.InvariantCulture), s.Repetitions.Count.ToString(CultureInfo.InvariantCulture), Fmt.Num(s.MedianOps, "0.0"),
                Fmt.Num(s.MinOps, "0.0"), Fmt.Num(s.MaxOps, "0.0"), Fmt.Num(s.Cv, "0.0000"), s.Noisy ? "yes" : "no", Fmt.Num(s.MedianUnits, "0.0"),
                WorkloadInfo.SecondaryUnit(spec.Workload) ?? string.Empty, Fmt.Num(s.P50Us, "0.000"), Fmt.Num(s.P99Us, "0.000"), Fmt.Num(s.MaxUs, "0.0"),
                Fmt.Num(s.RatioToNative, "0.000"), s.Failed ? "yes" : "no", spec.Layout.ToString(), Fmt.Num(s.MissesPerOp, "0.000"), Fmt.Num(s.WritesPerOp, "0.000"),
                s.KeyMapBytes.ToString(CultureInfo.InvariantCulture), RunSpec.ReadsLabel(spec.Reads), Fmt.Num(s.RatioToPlain, "0.000"),
                Fmt.Num(s.MedianCpuOps, "0.0"), Fmt.Num(s.CpuCv, "0.0000"), Fmt.Num(s.CpuRatioToNative, "0.000"), Fmt.Num(s.CpuRatioToPlain, "0.000"));
        }

        File.WriteAllText(Path.Combine(folder, "summary.csv"), text.ToString());

        text.Clear();
        Line(text, "workload", "provider", "size", "pragma", "batch", "threads", "connections", "api", "rep", "ops", "elapsed_ns", "ops_per_s", "units",
            "created", "digest", "blocks", "blocksets", "entries", "sqlite_version", "applied_pragmas", "error", "issues", "layout", "reads_per_transaction", "cpu_ns");
        foreach (var r in runs)
        {
            var spec = r.Spec;
            Line(text, WorkloadInfo.Name(spec.Workload), spec.Provider, spec.Size.ToString(CultureInfo.InvariantCulture), spec.Pragma, RunSpec.BatchLabel(spec.Batch),
                spec.Threads.ToString(CultureInfo.InvariantCulture), spec.Connections.ToString(), spec.Api.ToString(), r.Repetition.ToString(CultureInfo.InvariantCulture),
                r.Ops.ToString(CultureInfo.InvariantCulture), r.ElapsedNs.ToString(CultureInfo.InvariantCulture), Fmt.Num(r.OpsPerSecond, "0.0"),
                r.Units.ToString(CultureInfo.InvariantCulture), r.Created.ToString(CultureInfo.InvariantCulture), r.Digest.ToString("x16", CultureInfo.InvariantCulture),
                r.Counts.Blocks.ToString(CultureInfo.InvariantCulture), r.Counts.Blocksets.ToString(CultureInfo.InvariantCulture),
                r.Counts.BlocksetEntries.ToString(CultureInfo.InvariantCulture), r.SqliteVersion, r.AppliedPragmas, r.Error ?? string.Empty, string.Join("; ", r.Issues),
                spec.Layout.ToString(), RunSpec.ReadsLabel(spec.Reads), r.CpuNs.ToString(CultureInfo.InvariantCulture));
        }

        File.WriteAllText(Path.Combine(folder, "runs.csv"), text.ToString());
    }

    private static void Line(StringBuilder text, params string[] fields)
    {
        for (var i = 0; i < fields.Length; i++)
        {
            if (i > 0)
            {
                text.Append(',');
            }

            var f = fields[i];
            text.Append(f.AsSpan().IndexOfAny(",\"\n\r") >= 0 ? "\"" + f.Replace("\"", "\"\"", StringComparison.Ordinal) + "\"" : f);
        }

        text.Append('\n');
    }
}
