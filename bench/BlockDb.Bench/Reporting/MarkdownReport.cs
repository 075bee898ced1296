using System.Globalization;
using System.Text;
using BlockDb.Bench.Data;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;

namespace BlockDb.Bench.Reporting;

/// <summary>
/// <c>results.md</c>: machine, settings, method, the reference table (ops/s and ratio to native), latency,
/// and one pivot table per study and workload (rows = the study's x, columns = series), with the plots.
/// Figures whose CV exceeds 10 % carry a <c>~</c>.
/// </summary>
internal static class MarkdownReport
{
    public static string Write(string folder, ReportData d)
    {
        var md = new StringBuilder();
        var s = d.Settings;
        md.AppendLine(CultureInfo.InvariantCulture, $"# BlockDb provider sweep: {s.Preset}, {d.Started:yyyy-MM-dd HH:mm} UTC");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"Wall time {d.Elapsed.TotalMinutes:0.0} min. Compare ratios measured side by side in this run, not absolute ops/s: the machine is shared and noisy. `~` marks a figure whose CV over repetitions exceeds 10 % (noisy).");
        md.AppendLine();
        Machine(md, d);
        Settings(md, d);
        Reference(md, d);
        foreach (var study in s.Studies)
        {
            if (study == Study.Scale)
            {
                ScaleSection(md, d);
            }
            else if (study == Study.Limit)
            {
                LimitSection(md, d);
            }
            else
            {
                StudySection(md, d, study);
            }
        }

        Failures(md, d);
        var path = Path.Combine(folder, "results.md");
        File.WriteAllText(path, md.ToString());
        return path;
    }

    /// <summary>A cell: ops/s, ratio to native, noisy mark.</summary>
    public static string Cell(ResultSummary? r, bool ratio = true)
    {
        if (r is null)
        {
            return " ";
        }

        if (r.Failed)
        {
            return "FAILED";
        }

        var cell = Fmt.Rate(r.MedianOps) + (r.Noisy ? "~" : string.Empty);
        return ratio && !r.Spec.IsNative && !double.IsNaN(r.RatioToNative) ? $"{cell} ({Fmt.Ratio(r.RatioToNative)})" : cell;
    }

    private static void Machine(StringBuilder md, ReportData d)
    {
        md.AppendLine("## Machine");
        md.AppendLine();
        md.AppendLine("| | |");
        md.AppendLine("|---|---|");
        foreach (var (key, value) in d.Machine.Entries)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"| {key} | {value.Replace("|", "\\|", StringComparison.Ordinal)} |");
        }

        md.AppendLine();
    }

    private static void Settings(StringBuilder md, ReportData d)
    {
        var s = d.Settings;
        md.AppendLine("## Settings and method");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"- Providers: {string.Join(", ", s.Providers)}. Studies: {string.Join(", ", s.Studies).ToLowerInvariant()}.");
        md.AppendLine(CultureInfo.InvariantCulture, $"- Reference configuration: {RunSpec.SizeLabel(s.RefSize)} pre-filled blocks, pragma set `{s.RefPragma}`, commit batch {RunSpec.BatchLabel(s.RefBatch)} (`all` = one transaction for the run, as the seed's table), 1 thread, `await` on the public API. Each study varies one dimension from it; the threads study commits every {s.ThreadBatch} writes.");
        var extended = s.Sizes.Any(z => z > s.RefSize) && s.Workloads.Any(w => !s.ExtendedWorkloads.Contains(w))
            ? $" (above {RunSpec.SizeLabel(s.RefSize)} only {string.Join(", ", s.ExtendedWorkloads.Select(WorkloadInfo.Name))})"
            : string.Empty;
        md.AppendLine(CultureInfo.InvariantCulture, $"- Sizes {string.Join(", ", s.Sizes.Select(RunSpec.SizeLabel))}{extended}; pragma sets {string.Join(", ", s.Pragmas)}; batches {string.Join(", ", s.BatchSizes.Select(RunSpec.BatchLabel))} (batch-study runs of batch b do min(ops, max(1000, 100 b)) ops); threads {string.Join(", ", s.Threads)} ({string.Join(", ", s.Connections.Select(SweepPlanner.Label))}); api paths {string.Join(", ", s.ApiPaths).ToLowerInvariant()}.");
        md.AppendLine(CultureInfo.InvariantCulture, $"- Per run: {s.Ops:N0} timed ops after {s.Warmup:N0} warm-up ops on the same fresh copy (new-blockset: ⌈ops / k⌉ blocksets, the same number of blocks); {s.Repetitions} repetitions per configuration, providers interleaved; figures are medians, with min/max and CV in summary.csv. Seed {s.Seed}, {s.DuplicateShare:P0} repeated blocks in write streams, k = {s.BlocksetBlocks} blocks per new blockset.");
        md.AppendLine(CultureInfo.InvariantCulture, $"- Timed region: first op to the final COMMIT (commits included); open, PRAGMAs, prepare, data generation and the file copy are outside. Latency: a Stopwatch timestamp every {s.LatencyGroup} op(s), each sample = group time / ops in it (the final commit lands in the last sample); p50/p99 per repetition (MathNet, R-8), median over repetitions; max over all.");
        md.AppendLine(CultureInfo.InvariantCulture, $"- Data: real SHA-256 (44-char base64) of seeded records; {FileSizeModel.Description}.");
        foreach (var (size, plan) in d.Prefills.OrderBy(p => p.Key))
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"  - {RunSpec.SizeLabel(size)}: {plan.Blocks:N0} blocks in {plan.Blocksets:N0} blocksets ({plan.Blocks / (double)Math.Max(1, plan.Blocksets):0.0} blocks per file), {plan.FullBlockShare:P1} full-size blocks.");
        }

        if (d.Replay is { } replay)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"- Replay: {replay.Source}: {replay.Hashes.Length:N0} blocks in {replay.Files:N0} files ({replay.SkippedLines} invalid lines skipped).");
        }

        foreach (var note in d.Plan.Notes)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"- Note: {note}");
        }

        md.AppendLine();
        md.AppendLine("| workload | one op is | also reported |");
        md.AppendLine("|---|---|---|");
        foreach (var w in s.Workloads)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"| {WorkloadInfo.Name(w)} | {WorkloadInfo.OpDefinition(w)} | {WorkloadInfo.SecondaryUnit(w) ?? string.Empty}{(WorkloadInfo.SecondaryUnit(w) is null ? string.Empty : "/s")} |");
        }

        md.AppendLine();
    }

    private static void Reference(StringBuilder md, ReportData d)
    {
        var s = d.Settings;
        var providers = s.Providers;
        var rows = s.Workloads.Where(w => providers.Any(p => d.Reference(w, p) is not null)).ToList();
        if (rows.Count == 0)
        {
            return;
        }

        md.AppendLine(CultureInfo.InvariantCulture, $"## Reference configuration: ops/s (ratio to native), {RunSpec.SizeLabel(s.RefSize)} rows");
        md.AppendLine();
        md.AppendLine("| workload | " + string.Join(" | ", providers) + " |");
        md.AppendLine("|---|" + string.Concat(providers.Select(_ => "---:|")));
        foreach (var w in rows)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"| {WorkloadInfo.Name(w)} | {string.Join(" | ", providers.Select(p => Cell(d.Reference(w, p))))} |");
        }

        md.AppendLine();
        foreach (var w in rows.Where(w => WorkloadInfo.SecondaryUnit(w) is not null))
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"- {WorkloadInfo.Name(w)}, {WorkloadInfo.SecondaryUnit(w)}/s: {string.Join(", ", providers.Select(p => d.Reference(w, p) is { } r ? $"{p} {Fmt.Rate(r.MedianUnits)}" : null).Where(t => t is not null))}");
        }

        md.AppendLine();
        md.AppendLine("Per-op latency at the reference configuration, p50 / p99 / max in µs:");
        md.AppendLine();
        md.AppendLine("| workload | " + string.Join(" | ", providers) + " |");
        md.AppendLine("|---|" + string.Concat(providers.Select(_ => "---:|")));
        foreach (var w in rows)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"| {WorkloadInfo.Name(w)} | {string.Join(" | ", providers.Select(p => d.Reference(w, p) is { } r ? $"{Fmt.Us(r.P50Us)} / {Fmt.Us(r.P99Us)} / {Fmt.Us(r.MaxUs)}" : " "))} |");
        }

        md.AppendLine();
        if (d.PlotFiles.Contains("ratio.png"))
        {
            md.AppendLine("![ratio to native](plots/ratio.png)");
            md.AppendLine();
        }
    }

    private static void StudySection(StringBuilder md, ReportData d, Study study)
    {
        var name = study.ToString().ToLowerInvariant();
        md.AppendLine(CultureInfo.InvariantCulture, $"## {study} study");
        md.AppendLine();
        md.AppendLine(StudyBlurb(study, d.Settings));
        md.AppendLine();
        foreach (var plot in d.PlotFiles.Where(f => f == name + ".png" || f.StartsWith(name + "-", StringComparison.Ordinal)))
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"![{plot}](plots/{plot})");
            md.AppendLine();
        }

        foreach (var w in d.Settings.Workloads)
        {
            var points = d.Points(study, w);
            if (points.Count == 0)
            {
                continue;
            }

            var series = points.Select(p => p.Series).Distinct().ToList();
            md.AppendLine(CultureInfo.InvariantCulture, $"**{WorkloadInfo.Name(w)}** — ops/s (ratio to native)");
            md.AppendLine();
            md.AppendLine(CultureInfo.InvariantCulture, $"| {XName(study)} | {string.Join(" | ", series)} |");
            md.AppendLine("|---|" + string.Concat(series.Select(_ => "---:|")));
            foreach (var x in points.OrderBy(p => p.X).Select(p => p.XLabel).Distinct())
            {
                var cells = series.Select(se => points.FirstOrDefault(p => p.Series == se && p.XLabel == x) is { } point ? Cell(d.Find(point.Spec)) : " ");
                md.AppendLine(CultureInfo.InvariantCulture, $"| {x} | {string.Join(" | ", cells)} |");
            }

            md.AppendLine();
        }
    }

    /// <summary>
    /// The scale study: µs per op (and page-cache misses per op) per size, a column per provider and layout,
    /// the growth from the smallest to the largest size, and the KeyMap map's memory per million blocks.
    /// </summary>
    private static void ScaleSection(StringBuilder md, ReportData d)
    {
        md.AppendLine("## Scale study");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"Per-op cost against pre-filled blocks for each block layout (`BlockDb:Index:Layout`), {RunSpec.BatchPhrase(d.Settings.ScaleBatch)}. Cells: µs per op at the median throughput, then SQLite page-cache misses per op (pages read from the file; `n/a` where the provider does not expose `sqlite3_db_status`). `growth` = per-op cost at the largest size over the smallest. `Native` runs each layout's own design in C (for KeyMap: its verified in-memory map and inserts at explicit IDs). The Duplicati-style baseline is TextHash with select-then-insert on the same provider.");
        md.AppendLine();
        foreach (var plot in d.PlotFiles.Where(f => f == "scale.png"))
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"![{plot}](plots/{plot})");
            md.AppendLine();
        }

        foreach (var w in d.Settings.Workloads)
        {
            var points = d.Points(Study.Scale, w);
            if (points.Count == 0)
            {
                continue;
            }

            var series = points.Select(p => p.Series).Distinct().ToList();
            var xs = points.OrderBy(p => p.X).Select(p => p.XLabel).Distinct().ToList();
            ResultSummary? At(string se, string x) => points.FirstOrDefault(p => p.Series == se && p.XLabel == x) is { } point ? d.Find(point.Spec) : null;
            md.AppendLine(CultureInfo.InvariantCulture, $"**{WorkloadInfo.Name(w)}** — µs/op (page-cache misses/op)");
            md.AppendLine();
            md.AppendLine(CultureInfo.InvariantCulture, $"| rows | {string.Join(" | ", series)} |");
            md.AppendLine("|---|" + string.Concat(series.Select(_ => "---:|")));
            foreach (var x in xs)
            {
                var cells = series.Select(se => At(se, x) is { } r
                    ? r.Failed ? "FAILED" : string.Create(CultureInfo.InvariantCulture, $"{r.UsPerOp:0.00}{(r.Noisy ? "~" : string.Empty)} ({(double.IsNaN(r.MissesPerOp) ? "n/a" : r.MissesPerOp.ToString("0.00", CultureInfo.InvariantCulture))})")
                    : " ");
                md.AppendLine(CultureInfo.InvariantCulture, $"| {x} | {string.Join(" | ", cells)} |");
            }

            if (xs.Count > 1)
            {
                var growth = series.Select(se => At(se, xs[0]) is { UsPerOp: > 0 } a && At(se, xs[^1]) is { UsPerOp: > 0 } b && !a.Failed && !b.Failed
                    ? string.Create(CultureInfo.InvariantCulture, $"{b.UsPerOp / a.UsPerOp:0.00}x")
                    : " ");
                md.AppendLine(CultureInfo.InvariantCulture, $"| growth {xs[^1]}/{xs[0]} | {string.Join(" | ", growth)} |");
            }

            var maps = points.Select(p => d.Find(p.Spec)).Where(r => r is { KeyMapBytes: > 0 }).Select(r => r!).ToList();
            if (maps.Count > 0)
            {
                md.AppendLine();
                md.AppendLine(string.Join("; ", maps.GroupBy(r => r.Spec.Size).OrderBy(g => g.Key).Select(g =>
                    string.Create(CultureInfo.InvariantCulture, $"KeyMap map at {RunSpec.SizeLabel(g.Key)}: {g.Max(r => r.KeyMapBytes) / 1048576.0:0.0} MB ({g.Max(r => r.KeyMapBytes) / 1048576.0 / Math.Max(1, g.Key + g.Max(r => r.Spec.Ops)) * 1e6:0.0} MB per million blocks)"))) + ".");
            }

            md.AppendLine();
        }
    }

    /// <summary>
    /// The limit study: per workload and layout, each provider and read-batching variant with its median ops/s, spread,
    /// and both ratios side by side: to the C baseline running BlockDb's own design (same read-batching setting) and
    /// to the C plain limit.
    /// </summary>
    private static void LimitSection(StringBuilder md, ReportData d)
    {
        var s = d.Settings;
        md.AppendLine("## Limit study: BlockDb against C running its design, and against the plain C limit");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"{RunSpec.SizeLabel(s.RefSize)} pre-filled blocks, pragma set `{s.RefPragma}`, {RunSpec.BatchPhrase(s.LimitBatch)}, 1 thread, `await` on the public API; all rows of one workload and layout run interleaved ({s.Repetitions} repetitions, the order rotated each one). `reads` = `BlockDb:Batching:ReadsPerTransaction` (`default` = 256 in WAL mode; 1 = read batching off).");
        md.AppendLine();
        md.AppendLine("- **C same design** (`Native`): the C program runs what BlockDb runs for the layout: its statements, its write batch (commit every N writes), its read batch (same `reads` setting), for BlobHash and KeyMap the base64 decoding per op, for KeyMap the in-memory key map with every hit verified by `VerifyBlockId` and inserts at explicit IDs. Its ratio is BlockDb's overhead (.NET, the provider, the engine's checks).");
        md.AppendLine("- **Wall and CPU.** `ops/s` is wall-clock throughput (first op to the final COMMIT). `ops per CPU-s` divides the same ops by the worker thread's CPU time over the timed region (`CLOCK_THREAD_CPUTIME_ID`, read the same way in .NET and C): time lost waiting for a core on a loaded machine is not in it, and neither is time waiting on I/O (fsyncs at checkpoints) nor work on other threads (BlockDb's timer thread). Ratios are ratios of medians.");
        md.AppendLine("- **C plain limit** (`NativePlain`): the same statements in one transaction for the whole timed region (read-only workloads in one read transaction), no read batches, no savepoints, hashes decoded before timing. Its ratio is the distance to what SQLite does with the same statements; the `Native` row's ratio to it is what the design's transaction shape costs in C.");
        md.AppendLine();
        foreach (var w in s.Workloads)
        {
            var points = d.Points(Study.Limit, w);
            if (points.Count == 0)
            {
                continue;
            }

            md.AppendLine(CultureInfo.InvariantCulture, $"**{WorkloadInfo.Name(w)}** ({WorkloadInfo.OpDefinition(w)})");
            md.AppendLine();
            md.AppendLine("| layout | provider | reads | ops/s (median) | min – max | CV | vs C same design | vs C plain limit | ops per CPU-s | CPU CV | CPU: vs C same | CPU: vs C plain | p50 / p99 µs |");
            md.AppendLine("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
            foreach (var point in points.OrderBy(p => p.X).ThenBy(p => LimitOrder(s, p.Spec)))
            {
                if (d.Find(point.Spec) is not { } r)
                {
                    continue;
                }

                var spec = r.Spec;
                md.AppendLine(CultureInfo.InvariantCulture, $"| {spec.Layout} | {spec.Provider} | {(spec.IsPlain ? "-" : RunSpec.ReadsLabel(spec.Reads))} | {Cell(r, ratio: false)} | {Fmt.Rate(r.MinOps)} – {Fmt.Rate(r.MaxOps)} | {Fmt.Percent(r.Cv)} | {Fmt.Ratio(r.RatioToNative)} | {Fmt.Ratio(r.RatioToPlain)} | {Fmt.Rate(r.MedianCpuOps)} | {Fmt.Percent(r.CpuCv)} | {Fmt.Ratio(r.CpuRatioToNative)} | {Fmt.Ratio(r.CpuRatioToPlain)} | {Fmt.Us(r.P50Us)} / {Fmt.Us(r.P99Us)} |");
            }

            md.AppendLine();
        }
    }

    /// <summary>Rows of a limit table: the .NET providers in their order, each with its read-batching variants, then the C baselines.</summary>
    public static (int Native, int Provider, int Reads) LimitOrder(SweepSettings s, RunSpec spec) =>
        (spec.IsNative ? 1 : 0, s.Providers.ToList().IndexOf(spec.Provider), s.ReadsVariants.ToList().IndexOf(spec.Reads));

    private static string XName(Study study) => study switch
    {
        Study.Size => "rows",
        Study.Pragma => "pragma set",
        Study.Batch => "commit every",
        Study.Threads => "threads",
        _ => "path",
    };

    private static string StudyBlurb(Study study, SweepSettings s) => study switch
    {
        Study.Size => "Throughput against the number of pre-filled blocks (each size its own template, copied fresh per run).",
        Study.Pragma => "Each pragma on top of SQLite's defaults, and the recommended combination. The template is in DELETE mode and copied fresh per run, so a WAL set by one run never leaks into the next; the mode read back is checked and recorded (summary.csv `applied_pragmas`). " +
            string.Join("; ", PragmaSet.All.Where(p => s.Pragmas.Contains(p.Name)).Select(p => $"`{p.Name}` = {p.Description}")) + ".",
        Study.Batch => "Commit every b writes (BlockDb's `Batching:CommitEvery`), `all` = one transaction for the run. The commit batch applies to writes, so only writing workloads are shown (reads outside a write batch share read transactions of `Batching:ReadsPerTransaction` reads; see the limit study).",
        Study.Threads => $"Threads split the ops; per-thread = one session (connection) each, shared = one session behind a lock (seed 001). SQLite has one writer: per-thread writers queue on the write lock (busy_timeout raised to {ManagedRunner.MultiWriterBusyTimeoutMs / 1000} s), committing every {s.ThreadBatch} writes. Repeats stay within a thread's slice: with SelectThenInsert, two sessions inserting the same new block race (see the report).",
        _ => "`async` awaits each ValueTask (the headline path); `sync` calls `.GetAwaiter().GetResult()` on it; `driver` drives the provider's prepared statements directly (same SQL, same batching, no engine: no validation, no call guard, no ValueTask); `native` is the C loop.",
    };

    private static void Failures(StringBuilder md, ReportData d)
    {
        md.AppendLine("## Consistency");
        md.AppendLine();
        var failures = d.Failures.ToList();
        if (failures.Count == 0 && d.GlobalIssues.Count == 0)
        {
            md.AppendLine("Every run returned the IDs, created flags, units and row counts the oracle predicts, and every provider loaded the same SQLite.");
        }

        foreach (var issue in d.GlobalIssues)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"- {issue}");
        }

        foreach (var r in failures.Take(50))
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"- {r.Spec} rep {r.Repetition}: {r.Error ?? string.Join("; ", r.Issues)}");
        }

        if (d.PlotNote.Length > 0)
        {
            md.AppendLine();
            md.AppendLine(d.PlotNote);
        }

        md.AppendLine();
    }
}
