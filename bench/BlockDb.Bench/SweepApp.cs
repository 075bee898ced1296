using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Data;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;
using BlockDb.Bench.Reporting;

namespace BlockDb.Bench;

/// <summary>Runs a sweep end to end: plan, measure, check, report. Exit code 1 when any run failed or was inconsistent.</summary>
internal static class SweepApp
{
    public static int Run(SweepSettings s, bool dryRun)
    {
        SweepPlan plan;
        try
        {
            plan = SweepPlanner.Create(s);
        }
        catch (ArgumentException e)
        {
            Console.Error.WriteLine(e.Message);
            return 2;
        }

        var runs = plan.Specs.Count * s.Repetitions;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"BlockDb sweep '{s.Preset}': {plan.Specs.Count} configurations x {s.Repetitions} repetitions = {runs} runs; {string.Join(", ", s.Studies.Select(st => $"{st.ToString().ToLowerInvariant()} {plan.Points.Count(p => p.Study == st)} points"))}."));
        foreach (var note in plan.Notes)
        {
            Console.WriteLine("NOTE: " + note);
        }

        if (dryRun)
        {
            foreach (var spec in plan.Specs)
            {
                Console.WriteLine("  " + spec);
            }

            return 0;
        }

#if DEBUG
        Console.WriteLine("WARNING: this is a Debug build; measure with -c Release.");
#endif
        ReplayStream? replay = null;
        if (s.ReplayPath is { } replayPath)
        {
            replay = ReplayReader.Read(replayPath, w => Console.WriteLine("replay: " + w));
            Console.WriteLine($"Replay: {replay.Hashes.Length:N0} blocks in {replay.Files:N0} files from {replayPath}.");
        }

        Directory.CreateDirectory(s.WorkDir);
        Directory.CreateDirectory(s.OutDir);
        var started = DateTimeOffset.UtcNow;
        var clock = Stopwatch.StartNew();
        var factory = new WorkloadDataFactory(s.Seed, s.DuplicateShare, s.BlocksetBlocks, replay);
        SweepRunner? runner = null;
        var summaries = ProgressView.Run(runs, s.Plain, progress =>
        {
            runner = new SweepRunner(s, factory, progress);
            return runner.Run(plan);
        });

        var prefills = plan.Specs.Select(p => p.Size).Distinct().ToDictionary(size => size, size => PrefillPlan.Create((int)size, s.Seed));
        var report = new ReportData
        {
            Settings = s,
            Machine = MachineInfo.Collect(s.Providers, runner!.Native),
            Plan = plan,
            Summaries = summaries,
            Runs = runner.Results,
            GlobalIssues = runner.GlobalIssues,
            Prefills = prefills,
            Elapsed = clock.Elapsed,
            Started = started,
            Replay = replay,
        };
        CsvReport.Write(s.OutDir, plan, summaries, runner.Results);
        if (s.Plots)
        {
            var (pngs, note) = PlotReport.Write(s.OutDir, report);
            report.PlotFiles = pngs;
            report.PlotNote = note;
            Console.WriteLine(note);
        }
        else
        {
            report.PlotNote = "Plots skipped (--no-plots).";
        }

        var markdown = MarkdownReport.Write(s.OutDir, report);
        ConsoleReport.Write(report, s.Plain);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Done in {clock.Elapsed.TotalSeconds:F0} s. Results: {markdown}, summary.csv, runs.csv{(report.PlotFiles.Count > 0 ? ", plots/" : string.Empty)} in {s.OutDir}"));
        if (report.AnyFailure)
        {
            Console.WriteLine($"FAILED: {report.Failures.Count()} run(s) failed or were inconsistent; {report.GlobalIssues.Count} global issue(s).");
            return 1;
        }

        return 0;
    }
}
