using System.Globalization;

namespace BlockDb.Bench.Execution;

/// <summary>
/// The PRAGMA statements for resolved settings, in the order BlockDb's engine applies them (busy_timeout
/// first, then journal_mode, synchronous, temp_store, cache_size, mmap_size, threads). Used where the engine
/// is bypassed: the C baseline and the driver-level loop. The engine's own pragma code is internal.
/// </summary>
internal static class PragmaSql
{
    public static IReadOnlyList<string> For(PragmaSettings s)
    {
        var list = new List<string>();
        void Add(string name, object? value)
        {
            if (value is not null)
            {
                list.Add(string.Create(CultureInfo.InvariantCulture, $"PRAGMA {name} = {value}"));
            }
        }

        Add("busy_timeout", s.BusyTimeout);
        Add("journal_mode", s.JournalMode?.ToString().ToUpperInvariant());
        Add("synchronous", (int?)s.Synchronous);
        Add("temp_store", (int?)s.TempStore);
        Add("cache_size", s.CacheSize);
        Add("mmap_size", s.MmapSize);
        Add("threads", s.Threads);
        return list;
    }

    /// <summary>Builds read-back settings from raw pragma values (journal mode text, integers).</summary>
    public static PragmaSettings Parse(Func<string, string?> read)
    {
        long Int(string name) => long.Parse(read(name) ?? "0", NumberStyles.Integer, CultureInfo.InvariantCulture);
        return new PragmaSettings(
            Enum.Parse<JournalMode>(read("journal_mode") ?? "delete", ignoreCase: true),
            (SynchronousMode)Int("synchronous"),
            (TempStoreMode)Int("temp_store"),
            Int("cache_size"),
            Int("mmap_size"),
            (int)Int("threads"),
            (int)Int("busy_timeout"));
    }
}
