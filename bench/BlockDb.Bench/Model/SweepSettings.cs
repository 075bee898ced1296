using BlockDb.Layouts;

namespace BlockDb.Bench.Model;

/// <summary>Everything a sweep needs, resolved from the command line and a preset.</summary>
public sealed class SweepSettings
{
    /// <summary>The preset name (smoke, quick, full or custom).</summary>
    public string Preset { get; set; } = "custom";

    /// <summary>Providers to run, incl. <c>Native</c> and <c>NativePlain</c>.</summary>
    public IReadOnlyList<string> Providers { get; set; } = [];

    /// <summary>Whether <c>--providers</c> was given (a provider asked for by name is never dropped silently).</summary>
    public bool ProvidersExplicit { get; set; }

    /// <summary>Workloads to run.</summary>
    public IReadOnlyList<Workload> Workloads { get; set; } = [];

    /// <summary>Whether <c>--workloads</c> was given (a workload asked for by name is never dropped silently).</summary>
    public bool WorkloadsExplicit { get; set; }

    /// <summary>Studies to run.</summary>
    public IReadOnlyList<Study> Studies { get; set; } = [];

    /// <summary>Pre-filled sizes of the size study.</summary>
    public IReadOnlyList<long> Sizes { get; set; } = [];

    /// <summary>The size every other study runs at.</summary>
    public long RefSize { get; set; }

    /// <summary>Workloads that run at sizes above <see cref="RefSize"/> (the large sizes are costly).</summary>
    public IReadOnlyList<Workload> ExtendedWorkloads { get; set; } = [];

    /// <summary>Pragma sets of the pragma study.</summary>
    public IReadOnlyList<string> Pragmas { get; set; } = [];

    /// <summary>The pragma set every other study runs with.</summary>
    public string RefPragma { get; set; } = PragmaSet.RecommendedName;

    /// <summary>Commit batch sizes of the batch study (0 = one transaction).</summary>
    public IReadOnlyList<int> BatchSizes { get; set; } = [];

    /// <summary>The batch size every other study runs with (0 = one transaction for the run).</summary>
    public int RefBatch { get; set; }

    /// <summary>The batch size of the threads study's writers.</summary>
    public int ThreadBatch { get; set; } = 1000;

    /// <summary>Block layouts of the scale and limit studies (the other studies run on <see cref="BlockLayout.TextHash"/>, Duplicati's layout).</summary>
    public IReadOnlyList<BlockLayout> Layouts { get; set; } = LayoutCatalog.Created;

    /// <summary>Sizes of the scale study (default: <see cref="Sizes"/>).</summary>
    public IReadOnlyList<long> ScaleSizes { get; set; } = [];

    /// <summary>Commit every N writes in the scale study (default 1000, BlockDb's default).</summary>
    public int ScaleBatch { get; set; } = 1000;

    /// <summary>Workloads of the limit study (default select, xor-select-insert, xor-hit; <c>--workloads</c> when given).</summary>
    public IReadOnlyList<Workload> LimitWorkloads { get; set; } = [Workload.Select, Workload.XorSelectInsert, Workload.XorHit];

    /// <summary>Commit every N writes in the limit study (default 1000, BlockDb's default).</summary>
    public int LimitBatch { get; set; } = 1000;

    /// <summary><c>BlockDb:Batching:ReadsPerTransaction</c> variants of the limit study (null = BlockDb's default).</summary>
    public IReadOnlyList<int?> ReadsVariants { get; set; } = [null];

    /// <summary>Whether <c>--reads-per-transaction</c> was given.</summary>
    public bool ReadsExplicit { get; set; }

    /// <summary>Thread counts of the threads study.</summary>
    public IReadOnlyList<int> Threads { get; set; } = [];

    /// <summary>Connection modes of the threads study.</summary>
    public IReadOnlyList<ConnectionMode> Connections { get; set; } = [];

    /// <summary>Call paths of the api study.</summary>
    public IReadOnlyList<ApiPath> ApiPaths { get; set; } = [];

    /// <summary>Timed ops per run.</summary>
    public int Ops { get; set; }

    /// <summary>Warm-up ops per run.</summary>
    public int Warmup { get; set; }

    /// <summary>Repetitions per configuration.</summary>
    public int Repetitions { get; set; }

    /// <summary>Ops per latency sample (1 = a timestamp per op).</summary>
    public int LatencyGroup { get; set; } = 1;

    /// <summary>The data seed.</summary>
    public int Seed { get; set; } = 42;

    /// <summary>Share of repeated blocks in write streams.</summary>
    public double DuplicateShare { get; set; } = 0.2;

    /// <summary>k: blocks per new blockset.</summary>
    public int BlocksetBlocks { get; set; } = 16;

    /// <summary>The replay TSV, if any.</summary>
    public string? ReplayPath { get; set; }

    /// <summary>Scratch folder: templates, fresh copies, native binary and data files.</summary>
    public string WorkDir { get; set; } = string.Empty;

    /// <summary>Output folder.</summary>
    public string OutDir { get; set; } = string.Empty;

    /// <summary>Whether to draw the PNG plots (ScottPlot).</summary>
    public bool Plots { get; set; } = true;

    /// <summary>Plain line output even on a terminal.</summary>
    public bool Plain { get; set; }

    /// <summary>MiB of heap the C baseline faults in and frees before opening SQLite (a warm allocator, as in the long-lived .NET process).</summary>
    public int NativePrefaultMb { get; set; } = 256;

    /// <summary>JIT warm-up runs per provider and workload before measuring.</summary>
    public int JitWarmupRuns { get; set; } = 12;
}
