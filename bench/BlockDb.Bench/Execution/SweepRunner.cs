using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Data;
using BlockDb.Bench.Model;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Runs a plan: builds or reuses the templates, builds the native baseline, warms the JIT up, then for each
/// configuration runs its repetitions with the providers interleaved (rep 1 of every provider, then rep 2, …)
/// and their order rotated each repetition, so that drift and position effects hit all providers alike. Each
/// run gets a fresh copy of the template.
/// </summary>
internal sealed class SweepRunner
{
    private const int JitWarmupSize = 2000;

    private readonly SweepSettings _s;
    private readonly IProgressSink _progress;
    private readonly WorkloadDataFactory _factory;
    private readonly TemplateCache _templates;
    private readonly ManagedRunner _managed;
    private readonly Dictionary<long, PrefillPlan> _plans = [];
    private readonly Dictionary<string, WorkloadData> _data = [];
    private readonly Dictionary<string, Expectation> _expected = [];
    private readonly Dictionary<string, string> _dataFiles = [];
    private readonly string _runFolder;
    private NativeRunner? _native;

    public SweepRunner(SweepSettings settings, WorkloadDataFactory factory, IProgressSink progress)
    {
        _s = settings;
        _factory = factory;
        _progress = progress;
        _templates = new TemplateCache(Path.Combine(settings.WorkDir, "templates"), progress.Log);
        _managed = new ManagedRunner(settings.LatencyGroup);
        _runFolder = Path.Combine(settings.WorkDir, "run-" + Environment.ProcessId.ToString(CultureInfo.InvariantCulture));
    }

    /// <summary>The native build, once prepared.</summary>
    public NativeBuild? Native { get; private set; }

    /// <summary>Every repetition, in run order.</summary>
    public List<RepetitionResult> Results { get; } = [];

    /// <summary>Problems that are not tied to one run (for example differing SQLite versions).</summary>
    public List<string> GlobalIssues { get; } = [];

    public IReadOnlyList<ResultSummary> Run(SweepPlan plan)
    {
        Prepare(plan);
        try
        {
            foreach (var group in plan.Specs.GroupBy(p => p.GroupKey))
            {
                var specs = group.ToList();
                for (var rep = 1; rep <= _s.Repetitions; rep++)
                {
                    // Rotate the order each repetition: the position in a group matters on big files (the run after
                    // three 1.7 GB copies was ~25 % slower at 1e7), so every provider takes every position in turn.
                    for (var i = 0; i < specs.Count; i++)
                    {
                        var spec = specs[(i + rep - 1) % specs.Count];
                        Results.Add(RunOne(spec, rep));
                    }
                }
            }
        }
        finally
        {
            Cleanup();
        }

        if (ConsistencyCheck.CheckVersions(Results) is { } issue)
        {
            GlobalIssues.Add(issue);
        }

        var summaries = plan.Specs.Select(spec => Summarizer.Summarize(spec, Results.Where(r => r.Spec == spec).ToList())).ToList();
        Summarizer.SetRatios(summaries);
        return summaries;
    }

    private void Prepare(SweepPlan plan)
    {
        foreach (var (size, layout) in plan.Specs.Select(p => (p.Size, p.Layout)).Distinct().Order())
        {
            _templates.GetOrBuild(Plan(size), layout);
        }

        if (plan.Specs.Any(p => p.IsNative))
        {
            Native = NativeBuild.Create(_s.WorkDir, _progress.Log);
            _native = new NativeRunner(Native, _s.LatencyGroup, _s.NativePrefaultMb);
        }

        WarmUpJit(plan);
    }

    /// <summary>
    /// Tiered JIT: methods start unoptimized and are recompiled after 30 calls and a short delay. Running every
    /// (provider, workload, path) of the plan a few times on a small database first, then pausing, gets the hot
    /// code to its optimized tier before anything is measured.
    /// </summary>
    private void WarmUpJit(SweepPlan plan)
    {
        var kinds = plan.Specs.Where(p => !p.IsNative)
            .Select(p => p with
            {
                Size = JitWarmupSize,
                Pragma = _s.RefPragma,
                Batch = WorkloadInfo.Writes(p.Workload) ? _s.RefBatch : 0,
                Threads = 1,
                Connections = ConnectionMode.PerThread,
                Ops = SweepPlanner.OpsFor(p.Workload, 400, _s.BlocksetBlocks),
                Warmup = SweepPlanner.OpsFor(p.Workload, 100, _s.BlocksetBlocks),
            })
            .Distinct()
            .ToList();
        if (kinds.Count == 0 || _s.JitWarmupRuns <= 0)
        {
            return;
        }

        var clock = Stopwatch.StartNew();
        for (var i = 0; i < _s.JitWarmupRuns; i++)
        {
            foreach (var spec in kinds)
            {
                var path = FreshCopy.Create(_templates.GetOrBuild(Plan(JitWarmupSize), spec.Layout), _runFolder);
                try
                {
                    var r = _managed.Run(spec, 0, Data(spec).Data, path);
                    _ = r.Ops;
                }
                finally
                {
                    FreshCopy.Delete(path);
                }
            }
        }

        Thread.Sleep(300);
        _progress.Log(string.Create(CultureInfo.InvariantCulture, $"JIT warm-up: {kinds.Count} kinds x {_s.JitWarmupRuns} runs in {clock.Elapsed.TotalSeconds:F1} s."));
    }

    private RepetitionResult RunOne(RunSpec spec, int rep)
    {
        _progress.Starting($"{spec} rep {rep}");
        var (data, expected, key) = Data(spec);
        var template = _templates.GetOrBuild(Plan(spec.Size), spec.Layout);
        var path = FreshCopy.Create(template, _runFolder);
        var load = Lifecycle.LifecycleStudy.LoadAverage();
        RepetitionResult result;
        try
        {
            result = spec.IsNative
                ? _native!.Run(spec, rep, DataFile(key, data), path)
                : _managed.Run(spec, rep, data, path);
            ConsistencyCheck.Check(result, data, expected);
        }
        catch (Exception e)
        {
            result = new RepetitionResult { Spec = spec, Repetition = rep, Error = e.GetBaseException().Message };
        }
        finally
        {
            FreshCopy.Delete(path);
        }

        result.LoadAverage = load;
        var status = result.Error is not null ? $"FAILED: {result.Error}"
            : result.Issues.Count > 0 ? $"INCONSISTENT: {string.Join("; ", result.Issues)}"
            : string.Create(CultureInfo.InvariantCulture, $"{result.OpsPerSecond:N0} ops/s");
        _progress.Finished($"{spec} rep {rep}: {status}");
        return result;
    }

    private PrefillPlan Plan(long size)
    {
        if (!_plans.TryGetValue(size, out var plan))
        {
            plan = PrefillPlan.Create(checked((int)size), _s.Seed);
            _plans[size] = plan;
        }

        return plan;
    }

    private (WorkloadData Data, Expectation Expected, string Key) Data(RunSpec spec)
    {
        var family = spec.Workload is Workload.XorIgnoreSelect or Workload.XorReturning ? Workload.XorSelectInsert : spec.Workload;
        var key = string.Create(CultureInfo.InvariantCulture, $"{WorkloadInfo.Name(family)}-n{spec.Size}-o{spec.Ops}-w{spec.Warmup}-t{spec.Threads}-s{_s.Seed}");
        if (!_data.TryGetValue(key, out var data))
        {
            data = _factory.Create(spec.Workload, Plan(spec.Size), spec.Ops, spec.Warmup, spec.Threads);
            _data[key] = data;
        }

        var expectedKey = key + "/" + WorkloadInfo.Name(spec.Workload);
        if (!_expected.TryGetValue(expectedKey, out var expected))
        {
            expected = ExpectedResults.For(spec.Workload, Plan(spec.Size), data);
            _expected[expectedKey] = expected;
        }

        return (data, expected, key);
    }

    private string DataFile(string key, WorkloadData data)
    {
        if (!_dataFiles.TryGetValue(key, out var path))
        {
            // Kept in the work folder (like the templates) so a native run can be repeated by hand.
            var folder = Path.Combine(_s.WorkDir, "data");
            Directory.CreateDirectory(folder);
            path = Path.Combine(folder, $"{key}-{(_s.ReplayPath is null ? "synthetic" : Path.GetFileNameWithoutExtension(_s.ReplayPath))}.bin");
            NativeDataFile.Write(path, data);
            _dataFiles[key] = path;
        }

        return path;
    }

    private void Cleanup()
    {
        try
        {
            Directory.Delete(_runFolder, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
