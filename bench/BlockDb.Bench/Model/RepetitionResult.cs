namespace BlockDb.Bench.Model;

/// <summary>What one timed repetition of a <see cref="RunSpec"/> measured and returned.</summary>
public sealed class RepetitionResult
{
    /// <summary>The configuration.</summary>
    public required RunSpec Spec { get; init; }

    /// <summary>1-based repetition number.</summary>
    public required int Repetition { get; init; }

    /// <summary>Wall time of the timed region (first op to the final commit), in nanoseconds.</summary>
    public long ElapsedNs { get; set; }

    /// <summary>CPU time of the worker threads over the timed region, in nanoseconds (CLOCK_THREAD_CPUTIME_ID; time spent waiting for a core or on I/O is not in it).</summary>
    public long CpuNs { get; set; }

    /// <summary>Timed operations completed.</summary>
    public long Ops { get; set; }

    /// <summary>Secondary units completed (blocks, rows or files), or 0.</summary>
    public long Units { get; set; }

    /// <summary>Per-op latency samples in nanoseconds (each a group's time divided by the group size).</summary>
    public double[] LatenciesNs { get; set; } = [];

    /// <summary>FNV-1a digest of the IDs the timed ops returned (single-threaded runs), or 0.</summary>
    public ulong Digest { get; set; }

    /// <summary>Blocks inserted by the timed ops.</summary>
    public long Created { get; set; }

    /// <summary>Row counts after the run.</summary>
    public BlockDbCounts Counts { get; set; }

    /// <summary>The pragma values read back from the connection.</summary>
    public string AppliedPragmas { get; set; } = string.Empty;

    /// <summary>The native SQLite version the provider loaded.</summary>
    public string SqliteVersion { get; set; } = string.Empty;

    /// <summary>The failure, or <see langword="null"/>.</summary>
    /// <summary>Page-cache counters of the timed region (sqlite3_db_status), or null (SystemData, native, driver path).</summary>
    public SqliteCacheStats? Cache { get; set; }

    /// <summary>The 1-minute load average when the run started (NaN where it cannot be read).</summary>
    public double LoadAverage { get; set; } = double.NaN;

    /// <summary>The KeyMap layout's map at the end of the run, in bytes (0 for the other layouts).</summary>
    public long KeyMapBytes { get; set; }

    public string? Error { get; set; }

    /// <summary>Consistency problems found by the checks (empty when consistent).</summary>
    public List<string> Issues { get; } = [];

    /// <summary>Throughput in ops/s.</summary>
    public double OpsPerSecond => ElapsedNs > 0 ? Ops * 1e9 / ElapsedNs : 0;

    /// <summary>Throughput per CPU second of the worker threads (steadier than <see cref="OpsPerSecond"/> on a loaded machine).</summary>
    public double OpsPerCpuSecond => CpuNs > 0 ? Ops * 1e9 / CpuNs : 0;

    /// <summary>Secondary throughput in units/s.</summary>
    public double UnitsPerSecond => ElapsedNs > 0 ? Units * 1e9 / ElapsedNs : 0;

    /// <summary>Whether the run failed or was inconsistent.</summary>
    public bool Failed => Error is not null || Issues.Count > 0;
}
