using System.Globalization;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;
using Spectre.Console;

namespace BlockDb.Bench.Reporting;

/// <summary>
/// The console summary: the reference configuration per workload and provider (when it ran), the scale study
/// (µs per op per size, with its own commit batch) and the limit study (both ratios), then the failures. A table is
/// printed only when it has rows; every other study is in results.md.
/// </summary>
internal static class ConsoleReport
{
    public static void Write(ReportData d, bool plain)
    {
        var interactive = ProgressView.Interactive(plain);
        Reference(d, interactive);
        if (d.Settings.Studies.Contains(Study.Scale))
        {
            Scale(d, interactive);
        }

        if (d.Settings.Studies.Contains(Study.Limit))
        {
            Limit(d, interactive);
        }

        var others = d.Settings.Studies.Where(t => t is not (Study.Scale or Study.Limit)).ToList();
        if (others.Count > 0)
        {
            Console.WriteLine($"The {string.Join(", ", others).ToLowerInvariant()} stud{(others.Count == 1 ? "y is" : "ies are")} in results.md.");
        }

        Console.WriteLine(string.Join("; ", d.Machine.Entries
            .Where(e => e.Key is "CPU" or "Cores" or "RAM" or "OS" or ".NET" || e.Key.StartsWith("SQLite", StringComparison.Ordinal))
            .Select(e => $"{e.Key}: {e.Value}")));

        foreach (var note in d.Plan.Notes)
        {
            Console.WriteLine("NOTE: " + note);
        }

        foreach (var issue in d.GlobalIssues)
        {
            Console.WriteLine("ISSUE: " + issue);
        }

        var failures = d.Failures.ToList();
        foreach (var r in failures.Take(20))
        {
            Console.WriteLine($"FAILED {r.Spec} rep {r.Repetition}: {r.Error ?? string.Join("; ", r.Issues)}");
        }

        if (failures.Count > 20)
        {
            Console.WriteLine($"... and {failures.Count - 20} more failed runs (runs.csv).");
        }
    }

    private static void Reference(ReportData d, bool interactive)
    {
        var providers = d.Settings.Providers.Where(p => p != RunSpec.NativePlainProvider).ToList();
        var rows = d.Settings.Workloads
            .Select(w => (Workload: w, Cells: providers.Select(p => d.Reference(w, p)).ToList()))
            .Where(r => r.Cells.Any(c => c is not null))
            .Select(r => (IReadOnlyList<string>)[WorkloadInfo.Name(r.Workload), .. r.Cells.Select(Text)])
            .ToList();
        var title = string.Create(CultureInfo.InvariantCulture, $"Reference configuration: ops/s (ratio to native) [p99 µs], {RunSpec.SizeLabel(d.Settings.RefSize)} rows, pragma {d.Settings.RefPragma}, {RunSpec.BatchPhrase(d.Settings.RefBatch)}, 1 thread; ~ = CV > 10 %");
        Table(interactive, title, ["workload", .. providers], rows);
    }

    private static void Scale(ReportData d, bool interactive)
    {
        foreach (var w in d.Settings.Workloads)
        {
            var points = d.Points(Study.Scale, w);
            if (points.Count == 0)
            {
                continue;
            }

            var series = points.Select(p => p.Series).Distinct().ToList();
            var rows = points.OrderBy(p => p.X).Select(p => p.XLabel).Distinct()
                .Select(x => (IReadOnlyList<string>)[x, .. series.Select(se => points.FirstOrDefault(p => p.Series == se && p.XLabel == x) is { } point && d.Find(point.Spec) is { } r
                    ? r.Failed ? "FAILED" : string.Create(CultureInfo.InvariantCulture, $"{r.UsPerOp:0.00}{(r.Noisy ? "~" : string.Empty)}")
                    : string.Empty)])
                .ToList();
            var title = string.Create(CultureInfo.InvariantCulture, $"Scale study, {WorkloadInfo.Name(w)}: µs per op (lower is better), pragma {d.Settings.RefPragma}, {RunSpec.BatchPhrase(d.Settings.ScaleBatch)}, 1 thread; ~ = CV > 10 %");
            Table(interactive, title, ["rows", .. series], rows);
        }
    }

    private static void Limit(ReportData d, bool interactive)
    {
        foreach (var w in d.Settings.Workloads)
        {
            var points = d.Points(Study.Limit, w);
            if (points.Count == 0)
            {
                continue;
            }

            var rows = points.OrderBy(p => p.X).ThenBy(p => MarkdownReport.LimitOrder(d.Settings, p.Spec))
                .Select(p => d.Find(p.Spec))
                .Where(r => r is not null)
                .Select(r => (IReadOnlyList<string>)[
                    r!.Spec.Layout.ToString(),
                    r.Spec.Provider,
                    r.Spec.IsPlain ? "-" : RunSpec.ReadsLabel(r.Spec.Reads),
                    MarkdownReport.Cell(r, ratio: false),
                    $"{Fmt.Rate(r.MinOps)} – {Fmt.Rate(r.MaxOps)}",
                    Fmt.Ratio(r.RatioToNative),
                    Fmt.Ratio(r.RatioToPlain),
                    Fmt.Ratio(r.CpuRatioToNative),
                    Fmt.Ratio(r.CpuRatioToPlain),
                ])
                .ToList();
            var title = string.Create(CultureInfo.InvariantCulture, $"Limit study, {WorkloadInfo.Name(w)}: ops/s (median, min – max of {d.Settings.Repetitions}) and ratios to C running BlockDb's design and to the C plain limit, {RunSpec.SizeLabel(d.Settings.RefSize)} rows, {RunSpec.BatchPhrase(d.Settings.LimitBatch)}");
            Table(interactive, title, ["layout", "provider", "reads", "ops/s", "min – max", "vs C same", "vs C plain", "CPU: vs C same", "CPU: vs C plain"], rows);
        }
    }

    /// <summary>A table, or nothing when it has no rows (a header alone says nothing).</summary>
    private static void Table(bool interactive, string title, IReadOnlyList<string> header, IReadOnlyList<IReadOnlyList<string>> rows)
    {
        if (rows.Count == 0)
        {
            return;
        }

        if (interactive)
        {
            var table = new Table().Title(Markup.Escape(title)).AddColumn(header[0]);
            foreach (var h in header.Skip(1))
            {
                table.AddColumn(new TableColumn(Markup.Escape(h)).RightAligned());
            }

            foreach (var row in rows)
            {
                table.AddRow([.. row.Select(Markup.Escape)]);
            }

            AnsiConsole.Write(table);
            return;
        }

        Console.WriteLine(title);
        var widths = Enumerable.Range(0, header.Count).Select(i => Math.Max(header[i].Length, rows.Max(r => r[i].Length))).ToArray();
        Console.WriteLine(Row(widths, header));
        foreach (var row in rows)
        {
            Console.WriteLine(Row(widths, row));
        }

        Console.WriteLine();
    }

    private static string Text(ResultSummary? r) =>
        r is null ? string.Empty : $"{MarkdownReport.Cell(r)} [{Fmt.Us(r.P99Us)}]";

    private static string Row(int[] widths, IReadOnlyList<string> cells) =>
        string.Join("  ", cells.Select((c, i) => i == 0 ? c.PadRight(widths[i]) : c.PadLeft(widths[i])));
}
