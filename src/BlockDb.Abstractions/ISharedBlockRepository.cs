namespace BlockDb;

/// <summary>
/// A thread-safe repository for many concurrent tasks on one database. Writes (insert, select-xor-insert of a
/// new block, add blockset) go through one writer connection that groups them into shared transactions; each
/// call completes only once its transaction has committed, so a completed write is acknowledged (durable as far
/// as <c>synchronous</c> allows). Reads (find, list, get, counts) run on pooled reader connections and see
/// committed data only. Callers never see <c>SQLITE_BUSY</c> from contention between their own tasks.
/// </summary>
/// <remarks>
/// Select-xor-insert first looks the block up on a reader; only a miss is queued for the writer, which looks it
/// up again inside its transaction before inserting. A failed write fails only its own call (it wrote nothing),
/// unless SQLite rolled the whole transaction back (disk full, I/O error): then every write of that batch fails
/// with that error and none of them is acknowledged. Disposing waits for queued writes to commit; calls made
/// after disposal throw <see cref="ObjectDisposedException"/>.
/// </remarks>
public interface ISharedBlockRepository : IAsyncDisposable, IDisposable
{
    /// <summary>Finds a block's ID by hash and size among committed blocks.</summary>
    /// <param name="hash">The block hash (base64).</param>
    /// <param name="size">The block size in bytes.</param>
    /// <param name="cancellationToken">Cancels before the lookup.</param>
    /// <returns>The ID, or <see langword="null"/> when no such block has been committed.</returns>
    /// <exception cref="ArgumentException">The hash or size is invalid.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default);

    /// <summary>Inserts a new block; completes once committed.</summary>
    /// <param name="hash">The block hash (base64).</param>
    /// <param name="size">The block size in bytes.</param>
    /// <param name="cancellationToken">Cancels while the write is still queued.</param>
    /// <returns>The new block's ID.</returns>
    /// <exception cref="ArgumentException">The hash or size is invalid.</exception>
    /// <exception cref="BlockDbException">The block exists (<c>SQLITE_CONSTRAINT</c>), or SQLite failed.</exception>
    Task<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default);

    /// <summary>Finds a block's ID, inserting the block when absent; a created block is returned once committed.</summary>
    /// <param name="hash">The block hash (base64).</param>
    /// <param name="size">The block size in bytes.</param>
    /// <param name="cancellationToken">Cancels before the lookup or while the write is queued.</param>
    /// <returns>The ID and whether this call created the block.</returns>
    /// <exception cref="ArgumentException">The hash or size is invalid.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    Task<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default);

    /// <summary>Adds a blockset from its blocks (by hash and size); completes once committed. All of it or nothing.</summary>
    /// <param name="blocks">The blocks in file order; at least one, each already in the index or queued before this call.</param>
    /// <param name="fullHash">The hash of the whole content (base64), or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Cancels while queued, or between blocks (then nothing is written).</param>
    /// <returns>The new blockset's ID.</returns>
    /// <exception cref="ArgumentException">The list is empty or an entry is invalid.</exception>
    /// <exception cref="BlockNotFoundException">A block is not in the index.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    Task<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default);

    /// <summary>Adds a blockset from its block IDs; completes once committed. All of it or nothing.</summary>
    /// <param name="blockIds">The block IDs in file order; at least one.</param>
    /// <param name="fullHash">The hash of the whole content (base64), or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Cancels while queued, or between blocks (then nothing is written).</param>
    /// <returns>The new blockset's ID.</returns>
    /// <exception cref="ArgumentException">The list is empty or the full hash is invalid.</exception>
    /// <exception cref="BlockNotFoundException">An ID names no block.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    Task<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default);

    /// <summary>Lists a committed blockset's blocks in order (the join).</summary>
    /// <param name="blocksetId">The blockset ID.</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The blocks in order.</returns>
    /// <exception cref="BlocksetNotFoundException">No committed blockset has that ID.</exception>
    ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default);

    /// <summary>Gets a committed blockset.</summary>
    /// <param name="blocksetId">The blockset ID.</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The blockset.</returns>
    /// <exception cref="BlocksetNotFoundException">No committed blockset has that ID.</exception>
    ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default);

    /// <summary>Counts committed blocks, blocksets and entries.</summary>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The counts.</returns>
    ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default);

    /// <summary>Transactions committed so far by the writer (for reporting the batching achieved).</summary>
    long CommittedBatches { get; }

    /// <summary>Writes acknowledged so far.</summary>
    long AcknowledgedWrites { get; }
}
