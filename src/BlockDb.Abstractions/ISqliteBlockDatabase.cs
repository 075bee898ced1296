namespace BlockDb;

/// <summary>
/// What only a SQLite block index has: its pragmas, the KeyMap layout's in-memory map and the page-cache counters.
/// Every database a SQLite provider opens implements it; <c>database as ISqliteBlockDatabase</c> is
/// <see langword="null"/> on PostgreSQL.
/// </summary>
public interface ISqliteBlockDatabase : IBlockDatabase
{
    /// <summary>
    /// The pragma values read back from the first connection after applying the options. Every session's connection
    /// is checked against the same values when it opens (<see href="https://www.sqlite.org/pragma.html"/>).
    /// </summary>
    PragmaSettings AppliedPragmas { get; }

    /// <summary>
    /// The <see cref="BlockLayout.KeyMap"/> layout's in-memory key map: blocks held and bytes used (8 per slot), or
    /// (0, 0) for the other layouts and before the first lookup loads it.
    /// </summary>
    (long Blocks, long Bytes) KeyMapUsage { get; }

    /// <summary>
    /// The page-cache counters of this database's sessions, open and closed, summed as the <c>blockdb.page_cache.*</c>
    /// gauges sum them (<see href="https://www.sqlite.org/c3ref/c_dbstatus_options.html"/>). A session in a call counts
    /// with its last reading (this never waits); shared sessions are not counted.
    /// </summary>
    /// <returns>The counters, or <see langword="null"/> when the provider does not expose them (every SQLite provider of BlockDb does).</returns>
    SqliteCacheStats? ReadCacheStats();
}
