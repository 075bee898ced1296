namespace BlockDb.Bench.Model;

/// <summary>The workloads of the sweep; <see cref="WorkloadInfo"/> says what one operation is.</summary>
public enum Workload
{
    /// <summary>Find an existing block by hash and size.</summary>
    Select,

    /// <summary>Insert a new block.</summary>
    Insert,

    /// <summary>Select-xor-insert with <see cref="SelectXorInsertStrategy.SelectThenInsert"/> (the seed's xor1).</summary>
    XorSelectInsert,

    /// <summary>Select-xor-insert with <see cref="SelectXorInsertStrategy.InsertOrIgnoreThenSelect"/> (the seed's xor2).</summary>
    XorIgnoreSelect,

    /// <summary>Select-xor-insert with <see cref="SelectXorInsertStrategy.InsertReturningThenSelect"/>.</summary>
    XorReturning,

    /// <summary>List one blockset's blocks (the join).</summary>
    Join,

    /// <summary>One new blockset of k blocks: select-xor-insert each block, then add the blockset.</summary>
    NewBlockset,

    /// <summary>A recorded block stream: select-xor-insert each block, add a blockset per file.</summary>
    Replay,

    /// <summary>Select-xor-insert (SelectThenInsert) of an existing block: always a hit (an unchanged file's blocks in an incremental backup).</summary>
    XorHit,

    /// <summary>
    /// A rebuild: <c>ImportBlocksAsync</c> of new blocks into an empty KeyMap file (<c>bench limit</c> only; the C side is
    /// the plain import loop).
    /// </summary>
    Import,
}

/// <summary>How the worker threads reach SQLite.</summary>
public enum ConnectionMode
{
    /// <summary>Each thread opens its own session (connection).</summary>
    PerThread,

    /// <summary>All threads share one session behind a lock.</summary>
    Shared,
}

/// <summary>How the benchmark loop calls BlockDb.</summary>
public enum ApiPath
{
    /// <summary><c>await</c> each <c>ValueTask</c> of the public repository API (the headline path).</summary>
    Async,

    /// <summary><c>.GetAwaiter().GetResult()</c> on each <c>ValueTask</c> in a plain loop.</summary>
    Sync,

    /// <summary>A loop straight over the driver's prepared statements: no engine in between.</summary>
    Driver,
}

/// <summary>One-factor-at-a-time studies around the reference configuration.</summary>
public enum Study
{
    /// <summary>Throughput vs pre-filled DB size.</summary>
    Size,

    /// <summary>Throughput vs pragma set.</summary>
    Pragma,

    /// <summary>Throughput vs commit batch size.</summary>
    Batch,

    /// <summary>Throughput vs worker threads and connection mode.</summary>
    Threads,

    /// <summary>Async vs sync vs driver-level loop.</summary>
    Api,

    /// <summary>Per-op cost vs pre-filled DB size for each block layout (issue #6), at <see cref="SweepSettings.ScaleBatch"/>.</summary>
    Scale,

    /// <summary>
    /// Per layout at the reference size: each provider (and read-batching variant) against the C baseline that runs
    /// BlockDb's own design and against the C plain limit, side by side (issue 13).
    /// </summary>
    Limit,
}
