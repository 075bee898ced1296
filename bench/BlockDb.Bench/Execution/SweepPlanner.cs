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

    public static SweepPlan Create(SweepSettings s)
    {
        var points = new List<StudyPoint>();
        var dotnet = s.Providers.Where(p => p != RunSpec.NativeProvider).ToList();
        var refPragma = s.RefPragma;

        RunSpec Spec(string provider, Workload w, long size, string pragma, int batch, int threads = 1, ConnectionMode mode = ConnectionMode.PerThread, ApiPath api = ApiPath.Async, int? ops = null, BlockLayout layout = BlockLayout.TextHash)
        {
            var n = OpsFor(w, ops ?? s.Ops, s.BlocksetBlocks);
            return new RunSpec(provider, w, size, pragma, WorkloadInfo.Writes(w) ? batch : 0, threads, mode, api, n, Math.Min(OpsFor(w, s.Warmup, s.BlocksetBlocks), n), layout);
        }

        void Add(Study study, RunSpec spec, string series, string label, double x) => points.Add(new StudyPoint(study, spec, series, label, x));

        foreach (var w in s.Workloads)
        {
            if (s.Studies.Contains(Study.Size))
            {
                foreach (var size in s.Sizes.Where(z => z <= s.RefSize || s.ExtendedWorkloads.Contains(w)))
                {
                    foreach (var p in s.Providers)
                    {
                        Add(Study.Size, Spec(p, w, size, refPragma, s.RefBatch), p, RunSpec.SizeLabel(size), size);
                    }
                }
            }

            if (s.Studies.Contains(Study.Pragma) && !IsRepresented(s, w))
            {
                for (var i = 0; i < s.Pragmas.Count; i++)
                {
                    foreach (var p in s.Providers)
                    {
                        Add(Study.Pragma, Spec(p, w, s.RefSize, s.Pragmas[i], s.RefBatch), p, s.Pragmas[i], i);
                    }
                }
            }

            if (s.Studies.Contains(Study.Batch) && WorkloadInfo.Writes(w))
            {
                foreach (var batch in s.BatchSizes)
                {
                    var x = batch == 0 ? s.BatchSizes.Where(b => b > 0).DefaultIfEmpty(1).Max() * 4.0 : batch;
                    foreach (var p in s.Providers)
                    {
                        Add(Study.Batch, Spec(p, w, s.RefSize, refPragma, batch, ops: BatchStudyOps(s.Ops, batch)), p, RunSpec.BatchLabel(batch), x);
                    }
                }
            }

            // Replay is left out: its recorded repeats cross thread slices, and concurrent SelectThenInsert sessions race on them.
            if (s.Studies.Contains(Study.Threads) && w != Workload.Replay && !IsRepresented(s, w))
            {
                foreach (var mode in s.Connections)
                {
                    foreach (var t in s.Threads)
                    {
                        // One thread is the same run in both modes: the per-thread run stands for both.
                        var m = t == 1 ? ConnectionMode.PerThread : mode;
                        foreach (var p in s.Providers)
                        {
                            Add(Study.Threads, Spec(p, w, s.RefSize, refPragma, s.ThreadBatch, t, m), $"{p} {Label(mode)}", t.ToString(System.Globalization.CultureInfo.InvariantCulture), t);
                        }
                    }
                }
            }

            // The scale study: select and select-xor-insert per layout; the native C baseline speaks TextHash only.
            if (s.Studies.Contains(Study.Scale) && w is Workload.Select or Workload.XorSelectInsert)
            {
                foreach (var size in s.ScaleSizes.Count > 0 ? s.ScaleSizes : s.Sizes)
                {
                    foreach (var layout in s.Layouts)
                    {
                        foreach (var p in s.Providers.Where(p => layout == BlockLayout.TextHash || p != RunSpec.NativeProvider))
                        {
                            Add(Study.Scale, Spec(p, w, size, refPragma, s.ScaleBatch, layout: layout), ScaleSeries(p, layout), RunSpec.SizeLabel(size), size);
                        }
                    }
                }
            }

            if (s.Studies.Contains(Study.Api) && WorkloadInfo.HasAllApiPaths(w))
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

        var specs = points.Select(p => p.Spec)
            .Distinct()
            .OrderBy(p => p.Size)
            .ThenBy(p => p.ConfigKey, StringComparer.Ordinal)
            .ThenBy(p => ProviderOrder(s, p.Provider))
            .ToList();
        return new SweepPlan(specs, points);
    }

    /// <summary>
    /// The pragma and threads studies run the other two select-xor-insert strategies only when
    /// xor-select-insert is not selected: pragmas and threads move the three alike, and the sweep stays in budget.
    /// </summary>
    public static bool IsRepresented(SweepSettings s, Workload w) =>
        w is Workload.XorIgnoreSelect or Workload.XorReturning && s.Workloads.Contains(Workload.XorSelectInsert);

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
