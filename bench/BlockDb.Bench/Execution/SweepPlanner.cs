using BlockDb.Bench.Model;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Turns settings into runs: one-factor-at-a-time studies around the reference configuration
/// (ref size, ref pragma set, ref batch, 1 thread, async path). A configuration that several studies share
/// is run once. Specs are ordered by size, then configuration, so all providers of one configuration run
/// side by side (the sweep interleaves their repetitions).
/// </summary>
internal static class SweepPlanner
{
    /// <summary>Ops of a batch-study run: small batches commit (and maybe fsync) often, so they run fewer ops.</summary>
    public static int BatchStudyOps(int ops, int batch) => batch == 0 ? ops : Math.Min(ops, Math.Max(1000, 100 * batch));

    /// <summary>
    /// Ops of a workload for a requested op count: a new-blockset op is a blockset of k blocks, so it runs
    /// ⌈ops / k⌉ of them (the same number of blocks as the other workloads' ops); every other workload runs ops.
    /// </summary>
    public static int OpsFor(Workload workload, int ops, int blocksetBlocks) =>
        workload == Workload.NewBlockset ? Math.Max(1, (ops + blocksetBlocks - 1) / blocksetBlocks) : ops;

    /// <summary>The workloads the scale study runs: lookups and select-xor-insert (issue 6's question).</summary>
    public static readonly IReadOnlyList<Workload> ScaleWorkloads = [Workload.Select, Workload.XorSelectInsert, Workload.XorIgnoreSelect, Workload.XorReturning, Workload.XorHit];

    /// <exception cref="ArgumentException">A workload, provider or setting asked for by name that no selected study runs.</exception>
    public static SweepPlan Create(SweepSettings s)
    {
        var points = new List<StudyPoint>();
        var skipped = new List<(Workload Workload, string Note)>();
        var dotnet = s.Providers.Where(p => !RunSpec.IsNativeName(p)).ToList();
        var providers = s.Providers.Where(p => p != RunSpec.NativePlainProvider).ToList(); // the plain limit runs in the limit study only
        var refPragma = s.RefPragma;

        RunSpec Spec(string provider, Workload w, long size, string pragma, int batch, int threads = 1, ConnectionMode mode = ConnectionMode.PerThread, ApiPath api = ApiPath.Async, int? ops = null, BlockLayout layout = BlockLayout.TextHash, int? reads = null)
        {
            var n = OpsFor(w, ops ?? s.Ops, s.BlocksetBlocks);
            return new RunSpec(provider, w, size, pragma, WorkloadInfo.Writes(w) ? batch : 0, threads, mode, api, n, Math.Min(OpsFor(w, s.Warmup, s.BlocksetBlocks), n), layout, reads);
        }

        void Add(Study study, RunSpec spec, string series, string label, double x) => points.Add(new StudyPoint(study, spec, series, label, x));

        void Skip(Study study, Workload w, string why) => skipped.Add((w, $"{study.ToString().ToLowerInvariant()} study: {WorkloadInfo.Name(w)} not run ({why})."));

        foreach (var w in s.Workloads)
        {
            if (s.Studies.Contains(Study.Size))
            {
                foreach (var size in s.Sizes.Where(z => z <= s.RefSize || s.ExtendedWorkloads.Contains(w)))
                {
                    foreach (var p in providers)
                    {
                        Add(Study.Size, Spec(p, w, size, refPragma, s.RefBatch), p, RunSpec.SizeLabel(size), size);
                    }
                }
            }

            if (s.Studies.Contains(Study.Pragma))
            {
                if (IsRepresented(s, w))
                {
                    Skip(Study.Pragma, w, "pragmas move the three select-xor-insert strategies alike; xor-select-insert stands for them");
                }
                else
                {
                    for (var i = 0; i < s.Pragmas.Count; i++)
                    {
                        foreach (var p in providers)
                        {
                            Add(Study.Pragma, Spec(p, w, s.RefSize, s.Pragmas[i], s.RefBatch), p, s.Pragmas[i], i);
                        }
                    }
                }
            }

            if (s.Studies.Contains(Study.Batch))
            {
                if (!WorkloadInfo.Writes(w))
                {
                    Skip(Study.Batch, w, "it writes nothing, so the commit batch does not apply");
                }
                else
                {
                    foreach (var batch in s.BatchSizes)
                    {
                        var x = batch == 0 ? s.BatchSizes.Where(b => b > 0).DefaultIfEmpty(1).Max() * 4.0 : batch;
                        foreach (var p in providers)
                        {
                            Add(Study.Batch, Spec(p, w, s.RefSize, refPragma, batch, ops: BatchStudyOps(s.Ops, batch)), p, RunSpec.BatchLabel(batch), x);
                        }
                    }
                }
            }

            if (s.Studies.Contains(Study.Threads))
            {
                if (w == Workload.Replay)
                {
                    // Its recorded repeats cross thread slices, and concurrent SelectThenInsert sessions race on them.
                    Skip(Study.Threads, w, "its recorded repeats cross thread slices, where concurrent select-then-insert sessions race");
                }
                else if (IsRepresented(s, w))
                {
                    Skip(Study.Threads, w, "threads move the three select-xor-insert strategies alike; xor-select-insert stands for them");
                }
                else
                {
                    foreach (var mode in s.Connections)
                    {
                        foreach (var t in s.Threads)
                        {
                            // One thread is the same run in both modes: the per-thread run stands for both.
                            var m = t == 1 ? ConnectionMode.PerThread : mode;
                            foreach (var p in providers)
                            {
                                Add(Study.Threads, Spec(p, w, s.RefSize, refPragma, s.ThreadBatch, t, m), $"{p} {Label(mode)}", t.ToString(System.Globalization.CultureInfo.InvariantCulture), t);
                            }
                        }
                    }
                }
            }

            // The scale study: lookups and select-xor-insert per layout; the C baseline runs each layout's own design.
            if (s.Studies.Contains(Study.Scale))
            {
                if (!ScaleWorkloads.Contains(w))
                {
                    Skip(Study.Scale, w, $"the scale study runs {string.Join(", ", ScaleWorkloads.Select(WorkloadInfo.Name))}");
                }
                else if (IsRepresented(s, w))
                {
                    Skip(Study.Scale, w, "the layouts move the three select-xor-insert strategies alike; xor-select-insert stands for them");
                }
                else
                {
                    foreach (var layout in s.Layouts)
                    {
                        if (!WorkloadInfo.RunsOn(w, layout))
                        {
                            Skip(Study.Scale, w, $"on {layout}: that layout runs select-then-insert only, BlockDb refuses the other strategies with it");
                            continue;
                        }

                        foreach (var size in s.ScaleSizes.Count > 0 ? s.ScaleSizes : s.Sizes)
                        {
                            foreach (var p in providers)
                            {
                                Add(Study.Scale, Spec(p, w, size, refPragma, s.ScaleBatch, layout: layout), ScaleSeries(p, layout), RunSpec.SizeLabel(size), size);
                            }
                        }
                    }
                }
            }

            if (s.Studies.Contains(Study.Api))
            {
                if (!WorkloadInfo.HasAllApiPaths(w))
                {
                    Skip(Study.Api, w, "the sync and driver paths exist for select, insert and xor-select-insert");
                }
                else
                {
                    for (var i = 0; i < s.ApiPaths.Count; i++)
                    {
                        foreach (var p in dotnet)
                        {
                            Add(Study.Api, Spec(p, w, s.RefSize, refPragma, s.RefBatch, api: s.ApiPaths[i]), p, s.ApiPaths[i].ToString().ToLowerInvariant(), i);
                        }
                    }

                    if (s.Providers.Contains(RunSpec.NativeProvider))
                    {
                        Add(Study.Api, Spec(RunSpec.NativeProvider, w, s.RefSize, refPragma, s.RefBatch), RunSpec.NativeProvider, "native", s.ApiPaths.Count);
                    }
                }
            }

            // The limit study: per layout, every provider and read-batching variant beside the C same design (same
            // variant) and the C plain limit, all in one interleaved group.
            if (s.Studies.Contains(Study.Limit))
            {
                if (!s.LimitWorkloads.Contains(w))
                {
                    Skip(Study.Limit, w, $"without --workloads the limit study runs {string.Join(", ", s.LimitWorkloads.Select(WorkloadInfo.Name))}");
                }
                else
                {
                    for (var li = 0; li < s.Layouts.Count; li++)
                    {
                        var layout = s.Layouts[li];
                        if (!WorkloadInfo.RunsOn(w, layout))
                        {
                            Skip(Study.Limit, w, $"on {layout}: that layout runs select-then-insert only, BlockDb refuses the other strategies with it");
                            continue;
                        }

                        foreach (var reads in s.ReadsVariants)
                        {
                            foreach (var p in providers)
                            {
                                Add(Study.Limit, Spec(p, w, s.RefSize, refPragma, s.LimitBatch, layout: layout, reads: reads), LimitSeries(p, reads), layout.ToString(), li);
                            }
                        }

                        if (s.Providers.Contains(RunSpec.NativePlainProvider))
                        {
                            Add(Study.Limit, Spec(RunSpec.NativePlainProvider, w, s.RefSize, refPragma, s.LimitBatch, layout: layout), RunSpec.NativePlainProvider, layout.ToString(), li);
                        }
                    }
                }
            }
        }

        var notes = Notes(s, points, skipped);
        var specs = points.Select(p => p.Spec)
            .Distinct()
            .OrderBy(p => p.Size)
            .ThenBy(p => p.GroupKey, StringComparer.Ordinal)
            .ThenBy(p => ProviderOrder(s, p.Provider))
            .ThenBy(p => p.Reads ?? 0)
            .ToList();
        return new SweepPlan(specs, points, notes);
    }

    /// <summary>
    /// What was asked for by name and is left out: an error when no selected study runs it at all, else a note
    /// (printed before the runs and written into results.md). Defaults are not notes: a study simply runs what applies.
    /// </summary>
    private static List<string> Notes(SweepSettings s, List<StudyPoint> points, List<(Workload Workload, string Note)> skipped)
    {
        var studies = string.Join(", ", s.Studies.Select(t => t.ToString().ToLowerInvariant()));
        var errors = new List<string>();
        var notes = new List<string>();
        if (s.WorkloadsExplicit)
        {
            foreach (var w in s.Workloads)
            {
                var reasons = skipped.Where(k => k.Workload == w).Select(k => k.Note).ToList();
                if (!points.Any(p => p.Spec.Workload == w))
                {
                    errors.Add($"--workloads names {WorkloadInfo.Name(w)}, which none of the selected studies ({studies}) runs: {string.Join(" ", reasons)}");
                }
                else
                {
                    notes.AddRange(reasons);
                }
            }
        }

        if (s.ProvidersExplicit)
        {
            foreach (var p in s.Providers)
            {
                if (!points.Any(x => x.Spec.Provider == p))
                {
                    errors.Add(p == RunSpec.NativePlainProvider
                        ? $"--providers names {p}, the C plain limit, which runs in the limit study only (add --studies limit)."
                        : $"--providers names {p}, which none of the selected studies ({studies}) runs.");
                }
                else if (p == RunSpec.NativePlainProvider && s.Studies.Any(t => t != Study.Limit))
                {
                    notes.Add($"{p} (the C plain limit) runs in the limit study only.");
                }
            }
        }

        if (s.ReadsExplicit && !s.Studies.Contains(Study.Limit))
        {
            errors.Add("--reads-per-transaction sets the limit study's variants; add --studies limit (the other studies run BlockDb's default).");
        }

        if (errors.Count > 0)
        {
            throw new ArgumentException(string.Join(Environment.NewLine, errors));
        }

        return [.. notes.Distinct()];
    }

    /// <summary>
    /// The pragma, threads and scale studies run the other two select-xor-insert strategies only when
    /// xor-select-insert is not selected, unless the workloads were named: these dimensions move the three alike, and
    /// the default sweep stays in budget. Named workloads are all run.
    /// </summary>
    public static bool IsRepresented(SweepSettings s, Workload w) =>
        !s.WorkloadsExplicit && w is Workload.XorIgnoreSelect or Workload.XorReturning && s.Workloads.Contains(Workload.XorSelectInsert);

    /// <summary>The limit study's series name: provider and read-batching variant (the plain limit has none).</summary>
    public static string LimitSeries(string provider, int? reads) => $"{provider} reads={RunSpec.ReadsLabel(reads)}";

    /// <summary>The scale study's series name: provider and layout.</summary>
    public static string ScaleSeries(string provider, BlockLayout layout) => $"{provider} {layout}";

    public static string Label(ConnectionMode mode) => mode == ConnectionMode.PerThread ? "per-thread" : "shared";

    private static int ProviderOrder(SweepSettings s, string provider)
    {
        for (var i = 0; i < s.Providers.Count; i++)
        {
            if (s.Providers[i] == provider)
            {
                return i;
            }
        }

        return int.MaxValue;
    }
}
