using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Data;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;
using BlockDb.Bench.Reporting;

namespace BlockDb.Bench.Limit;

/// <summary>
/// Runs <c>bench limit</c> on the sweep's own machinery: the specs go through <see cref="SweepRunner"/> (templates, data
/// and oracle, the C program, JIT warm-up, fresh copies, rounds interleaved and rotated), then each .NET run is paired
/// with the C run of the same workload and round (<see cref="LimitPairs"/>).
/// </summary>
internal static class LimitStudy
{
    /// <summary>The workloads, in display order: find, select-xor-insert (select-then-insert, half new), import.</summary>
    public static readonly IReadOnlyList<Workload> Workloads = [Workload.Select, Workload.XorSelectInsert, Workload.Import];

    public static int Run(LimitSettings l)
    {
        var s = Sweep(l);
        var specs = Specs(l);
        var plan = new SweepPlan(specs, [], []);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"bench limit: {RunSpec.SizeLabel(l.Blocks)} blocks, KeyMap; find and select-xor-insert {l.Ops:N0} ops (warm-up {l.Warmup:N0}); import {l.Blocks:N0} blocks, {l.ImportBatch:N0} per transaction; {l.Rounds} round(s); {specs.Count} configurations."));
        Directory.CreateDirectory(l.WorkDir);
        Directory.CreateDirectory(l.OutDir);
        var clock = Stopwatch.StartNew();
        var started = DateTimeOffset.UtcNow;
        SweepRunner? runner = null;
        ProgressView.Run(specs.Count * l.Rounds, l.Plain, progress =>
        {
            runner = new SweepRunner(s, new WorkloadDataFactory(s.Seed, s.DuplicateShare, s.BlocksetBlocks, null), progress);
            return runner.Run(plan);
        });

        var pairs = LimitPairs.Create(runner!.Results);
        var machine = MachineInfo.Collect(l.Providers, runner.Native);
        var report = LimitReport.Write(l, started, clock.Elapsed, machine, runner.Results, pairs, runner.GlobalIssues);
        Console.WriteLine(report);
        Console.WriteLine($"Results: {Path.Combine(l.OutDir, "limit.md")}, runs.csv");
        var failures = runner.Results.Where(r => r.Failed).ToList();
        foreach (var f in failures)
        {
            Console.WriteLine($"FAILED: {f.Spec} round {f.Repetition}: {f.Error ?? string.Join("; ", f.Issues)}");
        }

        foreach (var issue in runner.GlobalIssues)
        {
            Console.WriteLine("FAILED: " + issue);
        }

        return failures.Count > 0 || runner.GlobalIssues.Count > 0 ? 1 : 0;
    }

    /// <summary>The sweep settings the runner reads (work folder, rounds, seed, the data's repeat share, warm-ups, latency group).</summary>
    private static SweepSettings Sweep(LimitSettings l) => new()
    {
        Preset = "limit",
        Providers = [.. l.Providers, .. RunSpec.NativeProviders],
        Repetitions = l.Rounds,
        Seed = l.Seed,
        DuplicateShare = LimitSettings.DuplicateShare,
        RefPragma = PragmaSet.RecommendedName,
        RefBatch = LimitSettings.CommitEvery,
        JitWarmupRuns = l.JitWarmupRuns,
        LatencyGroup = 64,
        WorkDir = l.WorkDir,
        OutDir = l.OutDir,
        Plain = l.Plain,
    };

    /// <summary>
    /// Find and select-xor-insert on a copy of the pre-filled KeyMap file, the import into a copy of an empty KeyMap file,
    /// per .NET provider, beside C running BlockDb's design and the plain C limit (for the import the plain insert loop).
    /// BlockDb's Recommended pragmas, one thread, one session, <c>await</c> on the public API.
    /// </summary>
    private static List<RunSpec> Specs(LimitSettings l)
    {
        var specs = new List<RunSpec>();
        foreach (var w in Workloads.Where(l.Workloads.Contains))
        {
            var import = w == Workload.Import;
            foreach (var provider in (IEnumerable<string>)[.. l.Providers, .. RunSpec.NativeProviders])
            {
                specs.Add(new RunSpec(
                    provider,
                    w,
                    Size: import ? 0 : l.Blocks,
                    PragmaSet.RecommendedName,
                    Batch: import ? l.ImportBatch : WorkloadInfo.Writes(w) ? LimitSettings.CommitEvery : 0,
                    Threads: 1,
                    ConnectionMode.PerThread,
                    ApiPath.Async,
                    Ops: import ? l.Blocks : l.Ops,
                    Warmup: import ? 0 : l.Warmup,
                    BlockLayout.KeyMap));
            }
        }

        return specs;
    }
}
