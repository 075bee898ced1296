namespace BlockDb;

/// <summary>
/// Pragma values, as requested (<see langword="null"/> = leave as is) or as read back from a connection
/// (all set). Units: <see cref="CacheSize"/> pages if positive, KiB if negative; <see cref="MmapSize"/> bytes;
/// <see cref="BusyTimeout"/> milliseconds.
/// </summary>
/// <param name="JournalMode"><c>journal_mode</c>.</param>
/// <param name="Synchronous"><c>synchronous</c>.</param>
/// <param name="TempStore"><c>temp_store</c>.</param>
/// <param name="CacheSize"><c>cache_size</c>.</param>
/// <param name="MmapSize"><c>mmap_size</c>.</param>
/// <param name="Threads"><c>threads</c>.</param>
/// <param name="BusyTimeout"><c>busy_timeout</c>.</param>
public sealed record PragmaSettings(
    JournalMode? JournalMode,
    SynchronousMode? Synchronous,
    TempStoreMode? TempStore,
    long? CacheSize,
    long? MmapSize,
    int? Threads,
    int? BusyTimeout)
{
    /// <summary>Nothing set.</summary>
    public static PragmaSettings None { get; } = new(null, null, null, null, null, null, null);

    /// <summary>SQLite's documented defaults (<see href="https://www.sqlite.org/pragma.html"/>).</summary>
    public static PragmaSettings SqliteDefaults { get; } = new(BlockDb.JournalMode.Delete, SynchronousMode.Full, TempStoreMode.Default, -2000, 0, 0, 0);

    /// <summary>Duplicati's combination: WAL, synchronous NORMAL, temp_store MEMORY, a 64 MiB cache, a 64 MiB mmap, 8 helper threads, a 10 s busy timeout.</summary>
    public static PragmaSettings Recommended { get; } = new(BlockDb.JournalMode.Wal, SynchronousMode.Normal, TempStoreMode.Memory, -65536, 67_108_864, 8, 10_000);

    /// <inheritdoc />
    public override string ToString() =>
        $"journal_mode={Show(JournalMode)} synchronous={Show(Synchronous)} temp_store={Show(TempStore)} cache_size={Show(CacheSize)} mmap_size={Show(MmapSize)} threads={Show(Threads)} busy_timeout={Show(BusyTimeout)}";

    private static string Show<T>(T? value)
        where T : struct => value is { } v ? v.ToString()!.ToUpperInvariant() : "-";
}
