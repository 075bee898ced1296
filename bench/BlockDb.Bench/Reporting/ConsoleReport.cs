using System.Globalization;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;
using Spectre.Console;

namespace BlockDb.Bench.Reporting;

/// <summary>The console summary: the reference configuration per workload and provider, and the failures.</summary>
internal static class ConsoleReport
{
    public static void Write(ReportData d, bool plain)
    {
        var providers = d.Settings.Providers;
        var rows = d.Settings.Workloads
            .Select(w => (Workload: w, Cells: providers.Select(p => d.Reference(w, p)).ToList()))
            .Where(r => r.Cells.Any(c => c is not null))
            .ToList();
        var title = string.Create(CultureInfo.InvariantCulture, $"ops/s (ratio to native) [p99 µs], {RunSpec.SizeLabel(d.Settings.RefSize)} rows, pragma {d.Settings.RefPragma}, batch {RunSpec.BatchLabel(d.Settings.RefBatch)}, 1 thread; ~ = CV > 10 %");
        if (ProgressView.Interactive(plain))
        {
            var table = new Table().Title(Markup.Escape(title)).AddColumn("workload");
            foreach (var p in providers)
            {
                table.AddColumn(new TableColumn(p).RightAligned());
            }

            foreach (var (w, cells) in rows)
            {
                table.AddRow([WorkloadInfo.Name(w), .. cells.Select(c => Markup.Escape(Text(c)))]);
            }

            AnsiConsole.Write(table);
        }
        else
        {
            Console.WriteLine(title);
            var widths = new[] { 18 }.Concat(providers.Select(p => Math.Max(p.Length, 26))).ToArray();
            Console.WriteLine(Row(widths, ["workload", .. providers]));
            foreach (var (w, cells) in rows)
            {
                Console.WriteLine(Row(widths, [WorkloadInfo.Name(w), .. cells.Select(Text)]));
            }
        }

        Console.WriteLine(string.Join("; ", d.Machine.Entries
            .Where(e => e.Key is "CPU" or "Cores" or "RAM" or "OS" or ".NET" || e.Key.StartsWith("SQLite", StringComparison.Ordinal))
            .Select(e => $"{e.Key}: {e.Value}")));

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

    private static string Text(ResultSummary? r) =>
        r is null ? string.Empty : $"{MarkdownReport.Cell(r)} [{Fmt.Us(r.P99Us)}]";

    private static string Row(int[] widths, string[] cells) =>
        string.Join("  ", cells.Select((c, i) => i == 0 ? c.PadRight(widths[i]) : c.PadLeft(widths[i])));
}
