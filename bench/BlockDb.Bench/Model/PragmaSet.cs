namespace BlockDb.Bench.Model;

/// <summary>
/// A named pragma configuration of the pragma study: SQLite's defaults, each single pragma on top of the
/// defaults (the seed's values), and the recommended combination (<see cref="PragmaPreset.Recommended"/>).
/// </summary>
/// <param name="Name">The command-line name.</param>
/// <param name="Description">What it changes.</param>
/// <param name="Configure">Sets the single pragma on top of the preset (nothing for the presets themselves).</param>
/// <param name="Preset">The starting preset.</param>
public sealed record PragmaSet(string Name, string Description, PragmaPreset Preset, Action<PragmaOptions> Configure)
{
    /// <summary>The reference set the other studies run with.</summary>
    public const string RecommendedName = "recommended";

    /// <summary>Every set, defaults first and the combination last.</summary>
    public static IReadOnlyList<PragmaSet> All { get; } =
    [
        new("defaults", "SQLite defaults set explicitly (DELETE, synchronous FULL, cache 2 MB, no mmap)", PragmaPreset.SqliteDefaults, _ => { }),
        new("journal-wal", "defaults + journal_mode=WAL", PragmaPreset.SqliteDefaults, p => p.JournalMode = JournalMode.Wal),
        new("sync-normal", "defaults + synchronous=NORMAL", PragmaPreset.SqliteDefaults, p => p.Synchronous = SynchronousMode.Normal),
        new("sync-off", "defaults + synchronous=OFF", PragmaPreset.SqliteDefaults, p => p.Synchronous = SynchronousMode.Off),
        new("temp-memory", "defaults + temp_store=MEMORY", PragmaPreset.SqliteDefaults, p => p.TempStore = TempStoreMode.Memory),
        new("cache-64m", "defaults + cache_size=-65536 (64 MiB)", PragmaPreset.SqliteDefaults, p => p.CacheSize = -65536),
        new("mmap-64m", "defaults + mmap_size=67108864 (64 MiB)", PragmaPreset.SqliteDefaults, p => p.MmapSize = 67_108_864),
        new("threads-8", "defaults + threads=8", PragmaPreset.SqliteDefaults, p => p.Threads = 8),
        new(RecommendedName, "the Recommended preset: WAL, NORMAL, temp MEMORY, cache 64 MiB, mmap 64 MiB, threads 8, busy 10 s", PragmaPreset.Recommended, _ => { }),
    ];

    /// <summary>Finds a set by name.</summary>
    /// <param name="name">The name, case-insensitive.</param>
    /// <returns>The set.</returns>
    /// <exception cref="ArgumentException">Unknown name.</exception>
    public static PragmaSet Get(string name) =>
        All.FirstOrDefault(p => string.Equals(p.Name, name.Trim(), StringComparison.OrdinalIgnoreCase))
        ?? throw new ArgumentException($"Unknown pragma set '{name}'; valid: {string.Join(", ", All.Select(p => p.Name))}, all.");

    /// <summary>Builds the options for one run.</summary>
    /// <param name="minBusyTimeoutMs">A busy_timeout floor for runs with several writer connections (0 = keep the set's value).</param>
    /// <returns>Fresh options.</returns>
    public PragmaOptions Create(int minBusyTimeoutMs = 0)
    {
        var options = new PragmaOptions { Preset = Preset };
        Configure(options);
        if (minBusyTimeoutMs > 0 && (BlockDb.Sqlite.Pragmas.Resolve(options).BusyTimeout ?? 0) < minBusyTimeoutMs)
        {
            options.BusyTimeout = minBusyTimeoutMs;
        }

        return options;
    }
}
