namespace BlockDb.Bench.Limit;

/// <summary>The settings of <c>bench limit</c> (<see cref="LimitCommand"/>).</summary>
internal sealed class LimitSettings
{
    /// <summary>The share of repeated blocks in the select-xor-insert stream: half new ("half new" in issue 25).</summary>
    public const double DuplicateShare = 0.5;

    /// <summary>Commit every this many writes in select-xor-insert (BlockDb's default, <c>CommitEvery</c> 1,000).</summary>
    public const int CommitEvery = 1000;

    /// <summary>Blocks in the pre-filled file of find and select-xor-insert; blocks the rebuild imports.</summary>
    public required int Blocks { get; init; }

    /// <summary>Timed ops per run of find and select-xor-insert.</summary>
    public required int Ops { get; init; }

    /// <summary>Untimed warm-up ops per run of find and select-xor-insert.</summary>
    public required int Warmup { get; init; }

    /// <summary>Rounds (repetitions, providers interleaved and rotated).</summary>
    public required int Rounds { get; init; }

    /// <summary>The .NET SQLite providers (the C loops always run).</summary>
    public required IReadOnlyList<string> Providers { get; init; }

    /// <summary>The workloads to run (find, sxi, import).</summary>
    public required IReadOnlyList<Model.Workload> Workloads { get; init; }

    /// <summary>Blocks per import transaction, on both sides.</summary>
    public required int ImportBatch { get; init; }

    /// <summary>JIT warm-up runs per provider and workload (on a 2,000-block file) before anything is measured.</summary>
    public required int JitWarmupRuns { get; init; }

    /// <summary>The data seed.</summary>
    public required int Seed { get; init; }

    /// <summary>Scratch folder.</summary>
    public required string WorkDir { get; init; }

    /// <summary>Output folder.</summary>
    public required string OutDir { get; init; }

    /// <summary>Plain progress lines.</summary>
    public required bool Plain { get; init; }

    /// <summary>The CI form.</summary>
    public required bool Smoke { get; init; }

    /// <summary>A workload by its name in this command.</summary>
    /// <param name="name">find, sxi or import.</param>
    /// <returns>The workload.</returns>
    /// <exception cref="ArgumentException">Another name.</exception>
    public static Model.Workload Workload(string name) => name.Trim().ToLowerInvariant() switch
    {
        "find" => Model.Workload.Select,
        "sxi" => Model.Workload.XorSelectInsert,
        "import" => Model.Workload.Import,
        _ => throw new ArgumentException($"Unknown workload '{name}'; valid: find, sxi, import."),
    };

    /// <exception cref="ArgumentException">A setting out of range.</exception>
    public void Validate()
    {
        if (Blocks < 1 || Ops < 1 || Rounds < 1 || Warmup < 0)
        {
            throw new ArgumentException("--blocks, --ops and --rounds must be at least 1.");
        }

        if (ImportBatch is < 1 or > ImportOptions.MaxItemsPerTransaction)
        {
            throw new ArgumentException($"--import-batch is blocks per import transaction; allowed 1 to {ImportOptions.MaxItemsPerTransaction:N0}.");
        }

        if (Workloads.Count == 0)
        {
            throw new ArgumentException("--workloads takes find, sxi and import.");
        }

        if (Providers.Count == 0 || Providers.Any(Model.RunSpec.IsNativeName))
        {
            throw new ArgumentException("--providers takes MicrosoftData, SystemData and PInvoke (the C loops always run).");
        }
    }
}
