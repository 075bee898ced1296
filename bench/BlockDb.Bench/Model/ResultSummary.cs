namespace BlockDb.Bench.Model;

/// <summary>The repetitions of one <see cref="RunSpec"/>, summarized.</summary>
public sealed class ResultSummary
{
    /// <summary>The CV above which a figure is marked noisy.</summary>
    public const double NoisyCv = 0.10;

    /// <summary>The configuration.</summary>
    public required RunSpec Spec { get; init; }

    /// <summary>The repetitions, in order.</summary>
    public required IReadOnlyList<RepetitionResult> Repetitions { get; init; }

    /// <summary>Median ops/s over the repetitions.</summary>
    public double MedianOps { get; init; }

    /// <summary>Slowest repetition, ops/s.</summary>
    public double MinOps { get; init; }

    /// <summary>Fastest repetition, ops/s.</summary>
    public double MaxOps { get; init; }

    /// <summary>Coefficient of variation of ops/s (sample standard deviation / mean); NaN with one repetition.</summary>
    public double Cv { get; init; }

    /// <summary>Median over the repetitions of ops per CPU second of the worker threads.</summary>
    public double MedianCpuOps { get; init; }

    /// <summary>Coefficient of variation of ops per CPU second; NaN with one repetition.</summary>
    public double CpuCv { get; init; }

    /// <summary>Median secondary units/s.</summary>
    public double MedianUnits { get; init; }

    /// <summary>Median over repetitions of the per-op p50 latency, microseconds.</summary>
    public double P50Us { get; init; }

    /// <summary>Median over repetitions of the per-op p99 latency, microseconds.</summary>
    public double P99Us { get; init; }

    /// <summary>Largest per-op latency of all repetitions, microseconds.</summary>
    public double MaxUs { get; init; }

    /// <summary>The SQLite version(s) the provider loaded.</summary>
    public string SqliteVersion { get; init; } = string.Empty;

    /// <summary>The pragmas read back (first repetition).</summary>
    public string AppliedPragmas { get; init; } = string.Empty;

    /// <summary>Median ops/s divided by the C same-design baseline's on the same configuration (same layout, same read batching), or NaN.</summary>
    public double RatioToNative { get; set; } = double.NaN;

    /// <summary>Median ops/s divided by the C plain limit's on the same configuration (same layout), or NaN.</summary>
    public double RatioToPlain { get; set; } = double.NaN;

    /// <summary><see cref="RatioToNative"/> on ops per CPU second.</summary>
    public double CpuRatioToNative { get; set; } = double.NaN;

    /// <summary><see cref="RatioToPlain"/> on ops per CPU second.</summary>
    public double CpuRatioToPlain { get; set; } = double.NaN;

    /// <summary>Whether CV exceeds <see cref="NoisyCv"/>.</summary>
    public bool Noisy => Cv > NoisyCv;

    /// <summary>Median page-cache misses per op over the timed region (pages read from the file or mmap); NaN when not measured.</summary>
    public double MissesPerOp { get; init; } = double.NaN;

    /// <summary>Median pages written per op (commits, spills); NaN when not measured.</summary>
    public double WritesPerOp { get; init; } = double.NaN;

    /// <summary>The KeyMap layout's map size at the end of a run, in bytes (0 for the other layouts).</summary>
    public long KeyMapBytes { get; init; }

    /// <summary>Microseconds per op at the median throughput.</summary>
    public double UsPerOp => MedianOps > 0 ? 1e6 / MedianOps : double.NaN;

    /// <summary>Whether any repetition failed or was inconsistent.</summary>
    public bool Failed => Repetitions.Any(r => r.Failed);
}
