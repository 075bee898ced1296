using System.Globalization;
using System.Text;
using MathNet.Numerics.Statistics;

namespace BlockDb.Bench.Lifecycle;

/// <summary>Writes the lifecycle study's results: <c>lifecycle.md</c>, <c>delete-runs.csv</c>, <c>convert-runs.csv</c>, <c>summary.csv</c>.</summary>
internal static class LifecycleReport
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    /// <summary>Writes the files and returns the Markdown.</summary>
    public static string Write(LifecycleSettings settings, LifecycleStudy study, IReadOnlyList<KeyValuePair<string, string>> machine, DateTimeOffset started, TimeSpan elapsed)
    {
        Directory.CreateDirectory(settings.OutputFolder);
        WriteRuns(settings.OutputFolder, study);
        var summary = new StringBuilder("kind,layout,provider,runs_ok,runs,metric,median,min,max,spread_pct\n");
        var md = new StringBuilder();
        md.AppendLine("# Lifecycle study (issue 12): delete and collect, convert").AppendLine();
        md.AppendLine(Inv, $"Command: `{settings.CommandLine}`").AppendLine();
        md.AppendLine(Inv, $"Started {started:yyyy-MM-dd HH:mm} UTC, took {elapsed.TotalMinutes:F1} min; {settings.Repetitions} repetitions, every configuration once per repetition, the order rotated by one each repetition. Load average (1 min) at the start of each run: {LoadText(study.Loads)}.").AppendLine();
        md.AppendLine("| machine | |").AppendLine("|---|---|");
        foreach (var (key, value) in machine)
        {
            md.AppendLine(Inv, $"| {key} | {value} |");
        }

        md.AppendLine();
        md.AppendLine(Inv, $"Data: {LifecyclePlan.Description}. Hashes are real SHA-256 of seeded records (seed {settings.Seed}). Templates are built once through BlockDb (PInvoke, synchronous=OFF, transactions of {LifecycleTemplates.FilesPerTransaction:N0} files) and checked; every run works on a fresh byte copy with BlockDb's default options (Recommended pragmas: WAL, synchronous=NORMAL) and `CommitEvery` = {settings.CommitEvery:N0}.").AppendLine();
        if (study.DeletePlan is { } d)
        {
            WriteDeletes(md, summary, settings, study, d);
        }

        if (study.ConvertPlan is { } c)
        {
            WriteConverts(md, summary, settings, study, c);
        }

        var failures = study.Deletes.Where(r => r.Error is not null).Select(r => $"delete+collect rep {r.Repetition} {r.Layout} {r.Provider}: {r.Error}")
            .Concat(study.Converts.Where(r => r.Error is not null).Select(r => $"convert rep {r.Repetition} {r.Target} {r.Provider}: {r.Error}")).ToList();
        md.AppendLine("## Consistency").AppendLine();
        md.AppendLine(failures.Count == 0
            ? "Every run's checks passed (counts, what the collection returned per volume, `CheckAsync` clean, sampled blocksets listed and their blocks found, deleted blocksets and collected blocks gone; conversions: their own check clean, rows copied, the new file's sampled blocksets)."
            : "FAILED:").AppendLine();
        foreach (var f in failures)
        {
            md.AppendLine("- " + f);
        }

        md.AppendLine().AppendLine("Per-run figures: `delete-runs.csv`, `convert-runs.csv`; per configuration: `summary.csv`.");
        File.WriteAllText(Path.Combine(settings.OutputFolder, "summary.csv"), summary.ToString());
        var text = md.ToString();
        File.WriteAllText(Path.Combine(settings.OutputFolder, "lifecycle.md"), text);
        return text;
    }

    private static void WriteDeletes(StringBuilder md, StringBuilder summary, LifecycleSettings settings, LifecycleStudy study, LifecyclePlan d)
    {
        md.AppendLine(Inv, $"## Delete {settings.DeleteShare:P0} of the blocksets, then collect their blocks").AppendLine();
        md.AppendLine(Inv, $"Template: {d.Blocks:N0} blocks, {d.Blocksets:N0} blocksets, {d.Entries.Length:N0} entries, {d.Volumes:N0} volumes. A run deletes {d.DeletedFiles.Length:N0} blocksets (every {1 / settings.DeleteShare:0.#}th by ID; {d.DeletedEntries:N0} entries) with one `DeleteBlocksetAsync` each and commits (timed: **per deleted blockset**), then calls `DeleteUnreferencedBlocksAsync()` once and commits (timed: **per collected block**; {d.CollectedBlocks.Length:N0} blocks, {d.CollectedBytes / 1048576.0:N0} MiB from {d.CollectedByVolume.Count:N0} volumes). Untimed before: one `FindBlockAsync` (the KeyMap layout loads its map there; shown as *first lookup*). Medians over the repetitions, [min–max].").AppendLine();
        md.AppendLine("| layout | provider | µs per deleted blockset | µs per collected block | both phases (s) | first lookup (s) | runs ok |");
        md.AppendLine("|---|---|---:|---:|---:|---:|---:|");
        foreach (var layout in settings.Layouts)
        {
            foreach (var provider in settings.Providers)
            {
                var all = study.Deletes.Where(r => r.Layout == layout && r.Provider == provider).ToList();
                var ok = all.Where(r => r.Error is null).ToList();
                var perSet = ok.Select(r => r.MicrosPerBlockset).ToList();
                var perBlock = ok.Select(r => r.MicrosPerBlock).ToList();
                var both = ok.Select(r => r.DeleteSeconds + r.CollectSeconds).ToList();
                var first = ok.Select(r => r.FirstLookupSeconds).ToList();
                md.AppendLine(Inv, $"| {layout} | {provider} | {Range(perSet, "F2")} | {Range(perBlock, "F2")} | {Range(both, "F2")} | {Range(first, "F2")} | {ok.Count}/{all.Count} |");
                Summary(summary, "delete", layout.ToString(), provider, ok.Count, all.Count, "us_per_deleted_blockset", perSet);
                Summary(summary, "delete", layout.ToString(), provider, ok.Count, all.Count, "us_per_collected_block", perBlock);
                Summary(summary, "delete", layout.ToString(), provider, ok.Count, all.Count, "both_phases_s", both);
            }
        }

        md.AppendLine();
        if (!settings.Layouts.Contains(BlockLayout.TextHash))
        {
            return;
        }

        var others = settings.Layouts.Where(l => l != BlockLayout.TextHash).ToList();
        md.AppendLine("Against TextHash (Duplicati's layout): the ratio of each repetition's run to the TextHash run of the same provider in the same repetition (below 1: faster than TextHash), median [min–max] over repetitions. Target (issue 12): KeyMap no slower than TextHash.").AppendLine();
        md.AppendLine("| layout | provider | deleting blocksets | collecting blocks | both phases | KeyMap target (≤ 1.00x, both phases) |");
        md.AppendLine("|---|---|---:|---:|---:|---|");
        foreach (var layout in others)
        {
            foreach (var provider in settings.Providers)
            {
                var pairs = Pairs(study.Deletes, provider, layout).ToList();
                var del = pairs.Select(p => p.Other.DeleteSeconds / p.Text.DeleteSeconds).ToList();
                var col = pairs.Select(p => p.Other.CollectSeconds / p.Text.CollectSeconds).ToList();
                var both = pairs.Select(p => (p.Other.DeleteSeconds + p.Other.CollectSeconds) / (p.Text.DeleteSeconds + p.Text.CollectSeconds)).ToList();
                var verdict = layout != BlockLayout.KeyMap || both.Count == 0 ? string.Empty
                    : both.Median() <= 1.0 ? (both.Max() <= 1.0 ? "met (every repetition)" : "met (median)")
                    : "NOT met";
                md.AppendLine(Inv, $"| {layout} | {provider} | {Range(del, "F2", "x")} | {Range(col, "F2", "x")} | {Range(both, "F2", "x")} | {verdict} |");
                Summary(summary, "delete-ratio-to-TextHash", layout.ToString(), provider, pairs.Count, pairs.Count, "delete", del);
                Summary(summary, "delete-ratio-to-TextHash", layout.ToString(), provider, pairs.Count, pairs.Count, "collect", col);
                Summary(summary, "delete-ratio-to-TextHash", layout.ToString(), provider, pairs.Count, pairs.Count, "both", both);
            }
        }

        md.AppendLine();
    }

    private static void WriteConverts(StringBuilder md, StringBuilder summary, LifecycleSettings settings, LifecycleStudy study, LifecyclePlan c)
    {
        md.AppendLine("## Convert a TextHash file").AppendLine();
        md.AppendLine(Inv, $"Source: a TextHash file of {c.Blocks:N0} blocks, {c.Blocksets:N0} blocksets, {c.Entries.Length:N0} entries, {c.Volumes:N0} volumes (same generator), a fresh copy per run. `BlockDbConverter.ConvertAsync` with its defaults (100,000 rows per transaction; both files with BlockDb's default options and the run's provider); timed from the call to its return, the new file's own check included (**blocks/s**), and until the last entry is copied (*copy only*). Medians [min–max].").AppendLine();
        md.AppendLine("| target | provider | blocks/s, check included | blocks/s, copy only | seconds | new file (MB) | check clean |");
        md.AppendLine("|---|---|---:|---:|---:|---:|---:|");
        foreach (var target in settings.ConvertTargets)
        {
            foreach (var provider in settings.Providers)
            {
                var all = study.Converts.Where(r => r.Target == target && r.Provider == provider).ToList();
                var ok = all.Where(r => r.Error is null).ToList();
                var rate = ok.Select(r => r.BlocksPerSecond).ToList();
                var copy = ok.Select(r => r.CopyBlocksPerSecond).ToList();
                var seconds = ok.Select(r => r.TotalSeconds).ToList();
                var mb = ok.Select(r => r.TargetBytes / 1e6).ToList();
                md.AppendLine(Inv, $"| {target} | {provider} | {Range(rate, "N0")} | {Range(copy, "N0")} | {Range(seconds, "F2")} | {(mb.Count == 0 ? "-" : mb.Median().ToString("F1", Inv))} | {all.Count(r => r.CheckClean)}/{all.Count} |");
                Summary(summary, "convert", target.ToString(), provider, ok.Count, all.Count, "blocks_per_s", rate);
                Summary(summary, "convert", target.ToString(), provider, ok.Count, all.Count, "copy_blocks_per_s", copy);
            }
        }

        md.AppendLine();
    }

    private static IEnumerable<(DeleteRun Text, DeleteRun Other)> Pairs(IEnumerable<DeleteRun> runs, string provider, BlockLayout layout)
    {
        var ok = runs.Where(r => r.Error is null && r.Provider == provider).ToList();
        foreach (var other in ok.Where(r => r.Layout == layout))
        {
            if (ok.FirstOrDefault(r => r.Layout == BlockLayout.TextHash && r.Repetition == other.Repetition) is { } text)
            {
                yield return (text, other);
            }
        }
    }

    private static void WriteRuns(string folder, LifecycleStudy study)
    {
        var deletes = new StringBuilder("repetition,order,layout,provider,sqlite,load_avg,first_lookup_s,blocksets_deleted,delete_s,us_per_deleted_blockset,blocks_collected,bytes_collected,collect_s,us_per_collected_block,verify_s,check_clean,error\n");
        foreach (var r in study.Deletes)
        {
            deletes.AppendLine(Inv, $"{r.Repetition},{r.Order},{r.Layout},{r.Provider},{r.SqliteVersion},{r.LoadAverage:F2},{r.FirstLookupSeconds:F4},{r.BlocksetsDeleted},{r.DeleteSeconds:F4},{r.MicrosPerBlockset:F3},{r.BlocksCollected},{r.BytesCollected},{r.CollectSeconds:F4},{r.MicrosPerBlock:F3},{r.VerifySeconds:F2},{r.CheckClean},{Csv(r.Error)}");
        }

        File.WriteAllText(Path.Combine(folder, "delete-runs.csv"), deletes.ToString());
        var converts = new StringBuilder("repetition,order,target,provider,load_avg,volumes,blocks,blocksets,entries,copy_s,total_s,blocks_per_s,copy_blocks_per_s,target_bytes,check_clean,error\n");
        foreach (var r in study.Converts)
        {
            converts.AppendLine(Inv, $"{r.Repetition},{r.Order},{r.Target},{r.Provider},{r.LoadAverage:F2},{r.Volumes},{r.Blocks},{r.Blocksets},{r.Entries},{r.CopySeconds:F4},{r.TotalSeconds:F4},{r.BlocksPerSecond:F0},{r.CopyBlocksPerSecond:F0},{r.TargetBytes},{r.CheckClean},{Csv(r.Error)}");
        }

        File.WriteAllText(Path.Combine(folder, "convert-runs.csv"), converts.ToString());
    }

    private static void Summary(StringBuilder csv, string kind, string layout, string provider, int ok, int all, string metric, List<double> values)
    {
        if (values.Count == 0)
        {
            csv.AppendLine(Inv, $"{kind},{layout},{provider},{ok},{all},{metric},,,,");
            return;
        }

        var median = values.Median();
        csv.AppendLine(Inv, $"{kind},{layout},{provider},{ok},{all},{metric},{median:G6},{values.Min():G6},{values.Max():G6},{Spread(values):F1}");
    }

    /// <summary>"median [min–max]", or "-" for no values.</summary>
    public static string Range(List<double> values, string format, string unit = "") =>
        values.Count == 0 ? "-"
        : values.Count == 1 ? values[0].ToString(format, Inv) + unit
        : $"{values.Median().ToString(format, Inv)}{unit} [{values.Min().ToString(format, Inv)}–{values.Max().ToString(format, Inv)}]";

    /// <summary>(max − min) / median, in percent.</summary>
    private static double Spread(List<double> values) => values.Count < 2 ? 0 : (values.Max() - values.Min()) / values.Median() * 100;

    private static string LoadText(List<double> loads)
    {
        var known = loads.Where(l => !double.IsNaN(l)).ToList();
        return known.Count == 0 ? "unknown" : string.Create(Inv, $"min {known.Min():F2}, median {known.Median():F2}, max {known.Max():F2} ({Environment.ProcessorCount} cores: a load of {Environment.ProcessorCount} keeps them all busy)");
    }

    private static string Csv(string? text) => text is null ? string.Empty : "\"" + text.Replace("\"", "\"\"", StringComparison.Ordinal) + "\"";
}
