using BlockDb.Bench.Data;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;

namespace BlockDb.Bench.Reporting;

/// <summary>Everything the reports show: settings, machine, plan, summaries and failures.</summary>
internal sealed class ReportData
{
    public required SweepSettings Settings { get; init; }

    public required MachineInfo Machine { get; init; }

    public required SweepPlan Plan { get; init; }

    public required IReadOnlyList<ResultSummary> Summaries { get; init; }

    public required IReadOnlyList<RepetitionResult> Runs { get; init; }

    public required IReadOnlyList<string> GlobalIssues { get; init; }

    public required IReadOnlyDictionary<long, PrefillPlan> Prefills { get; init; }

    public required TimeSpan Elapsed { get; init; }

    public required DateTimeOffset Started { get; init; }

    public ReplayStream? Replay { get; init; }

    public string PlotNote { get; set; } = string.Empty;

    public IReadOnlyList<string> PlotFiles { get; set; } = [];

    /// <summary>The summary of a spec, if it ran.</summary>
    public ResultSummary? Find(RunSpec spec) => Summaries.FirstOrDefault(s => s.Spec == spec);

    /// <summary>The reference configuration of a workload on a provider (ref size, pragma and batch; 1 thread; async).</summary>
    public ResultSummary? Reference(Workload workload, string provider)
    {
        var s = Settings;
        var ops = SweepPlanner.OpsFor(workload, s.Ops, s.BlocksetBlocks);
        var warmup = Math.Min(SweepPlanner.OpsFor(workload, s.Warmup, s.BlocksetBlocks), ops);
        var spec = new RunSpec(provider, workload, s.RefSize, s.RefPragma, WorkloadInfo.Writes(workload) ? s.RefBatch : 0, 1, ConnectionMode.PerThread, ApiPath.Async, ops, warmup);
        return Find(spec);
    }

    /// <summary>The points of one study and workload.</summary>
    public IReadOnlyList<StudyPoint> Points(Study study, Workload workload) =>
        [.. Plan.Points.Where(p => p.Study == study && p.Spec.Workload == workload)];

    /// <summary>Runs that failed or were inconsistent.</summary>
    public IEnumerable<RepetitionResult> Failures => Runs.Where(r => r.Failed);

    public bool AnyFailure => GlobalIssues.Count > 0 || Failures.Any();
}
