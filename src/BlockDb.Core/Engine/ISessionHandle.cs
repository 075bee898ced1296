namespace BlockDb.Engine;

/// <summary>
/// A <see cref="BlockSession{TEngine}"/> as its owners see it, whatever its engine: the database (registry, page-cache
/// gauges), the shared session (writer and readers) and the bulk import.
/// </summary>
internal interface ISessionHandle : IBlockSession
{
    /// <summary>
    /// The page-cache counters for the metrics (<c>blockdb.page_cache.*</c>) and <see cref="ISqliteBlockDatabase.ReadCacheStats"/>:
    /// read now when the session is idle, else the last reading (never waiting for a call, never inside one); null when
    /// the engine has none or none was read yet. After dispose, the final reading.
    /// </summary>
    SqliteCacheStats? SampleCacheStats();

    /// <summary>The session's idle timer (age commit and old reads), or null when it has none.</summary>
    IdleTimer? IdleTimer { get; }

    /// <summary>A bulk import's blockset: found by full hash and length (nothing written), else added from its blocks, inside the write transaction.</summary>
    ValueTask<bool> ImportBlocksetAsync(ImportBlockset blockset, long length, CancellationToken cancellationToken);
}
