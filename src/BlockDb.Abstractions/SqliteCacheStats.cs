namespace BlockDb;

/// <summary>
/// A connection's page-cache counters since it opened, from <c>sqlite3_db_status</c>
/// (<see href="https://www.sqlite.org/c3ref/c_dbstatus_options.html"/>). Each counts pages (4,096 bytes by default).
/// </summary>
/// <param name="Hits">Page requests the connection's cache answered (<c>SQLITE_DBSTATUS_CACHE_HIT</c>).</param>
/// <param name="Misses">Page requests that read the page from the file or mmap (<c>SQLITE_DBSTATUS_CACHE_MISS</c>).</param>
/// <param name="Writes">Pages written to the file or WAL (<c>SQLITE_DBSTATUS_CACHE_WRITE</c>).</param>
/// <param name="Spills">Dirty pages written before a commit because the cache was full (<c>SQLITE_DBSTATUS_CACHE_SPILL</c>).</param>
public readonly record struct SqliteCacheStats(long Hits, long Misses, long Writes, long Spills)
{
    /// <summary>The counters accumulated from <paramref name="earlier"/> to this reading.</summary>
    /// <param name="earlier">An earlier reading of the same connection.</param>
    /// <returns>The differences.</returns>
    public SqliteCacheStats Since(SqliteCacheStats earlier) =>
        new(Hits - earlier.Hits, Misses - earlier.Misses, Writes - earlier.Writes, Spills - earlier.Spills);
}

/// <summary>The <c>sqlite3_db_status</c> op codes of the page-cache counters (<see href="https://www.sqlite.org/c3ref/c_dbstatus_options.html"/>).</summary>
public static class SqliteCacheCounters
{
    /// <summary><c>SQLITE_DBSTATUS_CACHE_HIT</c>.</summary>
    public const int Hit = 7;

    /// <summary><c>SQLITE_DBSTATUS_CACHE_MISS</c>.</summary>
    public const int Miss = 8;

    /// <summary><c>SQLITE_DBSTATUS_CACHE_WRITE</c>.</summary>
    public const int Write = 9;

    /// <summary><c>SQLITE_DBSTATUS_CACHE_SPILL</c>.</summary>
    public const int Spill = 12;
}
