using BlockDb.Bench.Model;

namespace BlockDb.Bench.Cli;

/// <summary>
/// The presets. <c>smoke</c>: every provider, workload and code path on a tiny database, one repetition, in
/// seconds (CI: exits non-zero on any failure or inconsistency). <c>quick</c>: every study on 1e4/1e5 rows in
/// under 3 minutes on 2 cores. <c>full</c>: sizes to 1e7 (1e7 for select and xor-select-insert only), every
/// pragma set, batch sizes 1 to 65536 and threads 1, 2, 4, 4 repetitions (one per provider position; about 22 minutes on 2 cores).
/// </summary>
internal static class Presets
{
    public static readonly string[] Names = ["smoke", "quick", "full"];

    /// <summary>The studies of quick and full: all but the limit study, which runs on its own (<c>--studies limit</c>) so the sweeps keep their time.</summary>
    private static readonly Study[] SweepStudies = [.. Enum.GetValues<Study>().Where(t => t != Study.Limit)];

    public static SweepSettings Get(string name) => name switch
    {
        "smoke" => new SweepSettings
        {
            Preset = "smoke",
            Studies = [Study.Size, Study.Pragma, Study.Batch, Study.Threads, Study.Api, Study.Scale, Study.Limit],
            Sizes = [2000],
            RefSize = 2000,
            Pragmas = ["defaults", PragmaSet.RecommendedName],
            BatchSizes = [1, 0],
            RefBatch = 0,
            ThreadBatch = 100,
            Threads = [1, 2],
            Ops = 300,
            Warmup = 50,
            Repetitions = 1,
            JitWarmupRuns = 0,
        },
        "quick" => new SweepSettings
        {
            Preset = "quick",
            Studies = SweepStudies,
            Sizes = [10_000, 100_000],
            RefSize = 100_000,
            Pragmas = ["defaults", "journal-wal", "cache-64m", PragmaSet.RecommendedName],
            BatchSizes = [1, 64, 4096, 0],
            RefBatch = 0,
            ThreadBatch = 1000,
            Threads = [1, 2],
            Ops = 8000,
            Warmup = 4000,
            Repetitions = 3,
            JitWarmupRuns = 6,
        },
        "full" => new SweepSettings
        {
            Preset = "full",
            Studies = SweepStudies,
            Sizes = [10_000, 100_000, 1_000_000, 10_000_000],
            ScaleSizes = [100_000, 1_000_000, 10_000_000],
            RefSize = 1_000_000,
            ExtendedWorkloads = [Workload.Select, Workload.XorSelectInsert],
            Pragmas = [.. PragmaSet.All.Select(p => p.Name)],
            BatchSizes = [1, 16, 256, 4096, 65536, 0],
            RefBatch = 0,
            ThreadBatch = 1000,
            Threads = [1, 2, 4],
            Ops = 20_000,
            Warmup = 10_000,
            Repetitions = 4,
            JitWarmupRuns = 12,
        },
        _ => throw new ArgumentException($"Unknown preset '{name}'; valid: {string.Join(", ", Names)}."),
    };
}
