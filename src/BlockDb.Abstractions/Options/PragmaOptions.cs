namespace BlockDb;

/// <summary>
/// Typed pragmas, applied on every connection BlockDb opens and then read back
/// (<see href="https://www.sqlite.org/pragma.html"/>). A <see cref="Preset"/> gives the starting values;
/// each property that is set overrides its preset value. No pragma text is taken from configuration:
/// names are BlockDb's constants and values are these validated types.
/// </summary>
public sealed class PragmaOptions
{
    /// <summary>The largest <see cref="MmapSize"/> accepted: 1 TiB in bytes (SQLite caps it further at its compile-time <c>SQLITE_MAX_MMAP_SIZE</c>).</summary>
    public const long MaxMmapSize = 1L << 40;

    /// <summary>The starting values. Default: <see cref="PragmaPreset.Recommended"/>.</summary>
    public PragmaPreset Preset { get; set; } = PragmaPreset.Recommended;

    /// <summary><c>journal_mode</c>. It persists in the file for WAL, so the <see cref="PragmaPreset.SqliteDefaults"/> preset sets DELETE explicitly.</summary>
    public JournalMode? JournalMode { get; set; }

    /// <summary><c>synchronous</c>: how often SQLite waits for fsync.</summary>
    public SynchronousMode? Synchronous { get; set; }

    /// <summary><c>temp_store</c>: where temporary tables and indexes live.</summary>
    public TempStoreMode? TempStore { get; set; }

    /// <summary>
    /// <c>cache_size</c>: positive = pages, negative = KiB (−65,536 is 64 MiB). Allowed: −1,073,741,824 (1 TiB) to 1,073,741,824 pages.
    /// </summary>
    public long? CacheSize { get; set; }

    /// <summary><c>mmap_size</c> in bytes (0 disables memory-mapped I/O). Allowed: 0 to <see cref="MaxMmapSize"/>.</summary>
    public long? MmapSize { get; set; }

    /// <summary><c>threads</c>: auxiliary threads a prepared statement may use for sorting. Allowed: 0 to 64 (SQLite caps it at <c>SQLITE_MAX_WORKER_THREADS</c>, 8 by default).</summary>
    public int? Threads { get; set; }

    /// <summary><c>busy_timeout</c> in milliseconds: how long a connection waits for another's lock before <c>SQLITE_BUSY</c>. Allowed: 0 to 3,600,000.</summary>
    public int? BusyTimeout { get; set; }

    /// <summary>A copy of these options (changing one does not change the other).</summary>
    /// <returns>The copy.</returns>
    internal PragmaOptions Clone() => (PragmaOptions)MemberwiseClone();

    /// <summary>Checks every value.</summary>
    /// <exception cref="BlockDbConfigurationException">A value is out of range or not a defined name; the message lists what is allowed.</exception>
    internal void Validate()
    {
        const string p = "BlockDb:Pragmas:";
        OptionGuard.Defined(Preset, p + nameof(Preset));
        OptionGuard.Defined(JournalMode, p + nameof(JournalMode));
        OptionGuard.Defined(Synchronous, p + nameof(Synchronous));
        OptionGuard.Defined(TempStore, p + nameof(TempStore));
        OptionGuard.InRange(CacheSize, -1_073_741_824, 1_073_741_824, p + nameof(CacheSize), "(pages if positive, KiB if negative)");
        OptionGuard.InRange(MmapSize, 0, MaxMmapSize, p + nameof(MmapSize), "bytes");
        OptionGuard.InRange(Threads, 0, 64, p + nameof(Threads), "threads");
        OptionGuard.InRange(BusyTimeout, 0, 3_600_000, p + nameof(BusyTimeout), "milliseconds");
    }
}

/// <summary>Named starting points for <see cref="PragmaOptions"/>.</summary>
public enum PragmaPreset
{
    /// <summary>Apply nothing but the properties set explicitly; the file and build keep their own values (a WAL file stays in WAL).</summary>
    None = 0,

    /// <summary>SQLite's documented defaults, set explicitly: DELETE journal, synchronous FULL, temp_store DEFAULT, cache_size −2000, mmap_size 0, threads 0, busy_timeout 0.</summary>
    SqliteDefaults = 1,

    /// <summary>Duplicati's combination, which the pragma study of the SQLite provider comparison found fastest: WAL, synchronous NORMAL, temp_store MEMORY, cache_size −65536 (64 MiB), mmap_size 67,108,864 (64 MiB), threads 8, busy_timeout 10,000 ms.</summary>
    Recommended = 2,
}

/// <summary><c>journal_mode</c> values (<see href="https://www.sqlite.org/pragma.html#pragma_journal_mode"/>).</summary>
public enum JournalMode
{
    /// <summary>Rollback journal deleted at each commit (SQLite's default).</summary>
    Delete = 0,

    /// <summary>Rollback journal truncated to zero bytes at each commit.</summary>
    Truncate = 1,

    /// <summary>Rollback journal header zeroed at each commit.</summary>
    Persist = 2,

    /// <summary>Rollback journal in memory: a crash mid-transaction can corrupt the file.</summary>
    Memory = 3,

    /// <summary>Write-ahead log (<see href="https://www.sqlite.org/wal.html"/>): readers do not block the writer. Persists in the file.</summary>
    Wal = 4,

    /// <summary>No journal: no rollback, and a crash mid-transaction can corrupt the file.</summary>
    Off = 5,
}

/// <summary><c>synchronous</c> values (<see href="https://www.sqlite.org/pragma.html#pragma_synchronous"/>).</summary>
public enum SynchronousMode
{
    /// <summary>0: never waits for fsync; an OS crash or power loss can corrupt the file.</summary>
    Off = 0,

    /// <summary>1: in WAL, fsync at checkpoints only: safe from corruption, the last commits may be lost on power loss.</summary>
    Normal = 1,

    /// <summary>2: fsync at every commit (SQLite's default).</summary>
    Full = 2,

    /// <summary>3: FULL, plus an fsync of the folder after unlinking a rollback journal.</summary>
    Extra = 3,
}

/// <summary><c>temp_store</c> values (<see href="https://www.sqlite.org/pragma.html#pragma_temp_store"/>).</summary>
public enum TempStoreMode
{
    /// <summary>0: the compile-time default.</summary>
    Default = 0,

    /// <summary>1: temporary storage in files.</summary>
    File = 1,

    /// <summary>2: temporary storage in memory.</summary>
    Memory = 2,
}
