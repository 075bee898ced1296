namespace BlockDb;

/// <summary>
/// A session on the block index: the hot operations of a backup engine on one connection, with its own
/// commit batch (<see cref="BatchingOptions"/>). Not thread-safe: one call at a time; concurrent calls throw
/// <see cref="InvalidOperationException"/>. Open one session per task.
/// </summary>
/// <remarks>
/// SQLite does its work synchronously, so the <c>ValueTask</c>s complete before they are returned and cost no
/// allocation (as Microsoft.Data.Sqlite's own <c>*Async</c> methods). Every call checks its
/// <see cref="CancellationToken"/> first; <c>AddBlocksetAsync</c> also checks it between blocks and then
/// writes nothing. A failed write leaves the earlier writes of the batch intact and writes nothing of its own.
/// Hashes are standard base64 with <c>=</c> padding (1 to 66 hash bytes); sizes are bytes, 1 or more.
/// Invalid input throws <see cref="ArgumentException"/> (or its <see cref="ArgumentNullException"/> and
/// <see cref="ArgumentOutOfRangeException"/> subtypes) before anything is written.
/// </remarks>
public interface IBlockRepository : IAsyncDisposable, IDisposable
{
    /// <summary>The pragma values read back from this session's connection.</summary>
    PragmaSettings AppliedPragmas { get; }

    /// <summary>Write operations in the open batch, not yet committed.</summary>
    int PendingWrites { get; }

    /// <summary>
    /// This session's page-cache counters since it opened (pages read from the cache, read from the file, written),
    /// from <c>sqlite3_db_status</c>; <see langword="null"/> when the provider does not expose them (SystemData).
    /// Call it between operations, like any other call of the session.
    /// </summary>
    /// <returns>The counters, or <see langword="null"/>.</returns>
    /// <exception cref="ObjectDisposedException">The session is disposed.</exception>
    SqliteCacheStats? ReadCacheStats();

    /// <summary>Finds a block's ID by hash and size.</summary>
    /// <param name="hash">The block hash (base64).</param>
    /// <param name="size">The block size in bytes.</param>
    /// <param name="cancellationToken">Cancels before the lookup.</param>
    /// <returns>The ID, or <see langword="null"/> when no such block exists.</returns>
    /// <exception cref="ArgumentException">The hash is null, empty or not base64, or the size is below 1.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default);

    /// <summary>Inserts a new block. Counts as one write of the batch.</summary>
    /// <param name="hash">The block hash (base64).</param>
    /// <param name="size">The block size in bytes.</param>
    /// <param name="cancellationToken">Cancels before the insert.</param>
    /// <returns>The new block's ID.</returns>
    /// <exception cref="ArgumentException">The hash or size is invalid.</exception>
    /// <exception cref="BlockDbException">The block exists (<c>SQLITE_CONSTRAINT</c>, 19), or SQLite failed.</exception>
    ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default);

    /// <summary>
    /// Finds a block's ID, inserting the block when absent (select-xor-insert), with the configured
    /// <see cref="SelectXorInsertStrategy"/>. An insert counts as one write of the batch; a find does not.
    /// </summary>
    /// <param name="hash">The block hash (base64).</param>
    /// <param name="size">The block size in bytes.</param>
    /// <param name="cancellationToken">Cancels before the lookup.</param>
    /// <returns>The ID and whether this call created the block.</returns>
    /// <exception cref="ArgumentException">The hash or size is invalid.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default);

    /// <summary>
    /// Adds a blockset from its blocks in order, named by hash and size; each must already be in the index.
    /// Its <c>Length</c> is the sum of the sizes. All of it is written, or nothing. Counts as one write.
    /// </summary>
    /// <param name="blocks">The blocks in file order; at least one.</param>
    /// <param name="fullHash">The hash of the whole content (base64), or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Checked before and between blocks.</param>
    /// <returns>The new blockset's ID.</returns>
    /// <exception cref="ArgumentException">The list is null or empty, or a hash or size is invalid.</exception>
    /// <exception cref="BlockNotFoundException">A block is not in the index.</exception>
    /// <exception cref="OperationCanceledException">Cancelled; nothing of the blockset was written.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    ValueTask<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default);

    /// <summary>Adds a blockset from its block IDs in order. Its <c>Length</c> is the sum of the blocks' sizes. All of it is written, or nothing. Counts as one write.</summary>
    /// <param name="blockIds">The block IDs in file order; at least one.</param>
    /// <param name="fullHash">The hash of the whole content (base64), or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Checked before and between blocks.</param>
    /// <returns>The new blockset's ID.</returns>
    /// <exception cref="ArgumentException">The list is null or empty, or the full hash is invalid.</exception>
    /// <exception cref="BlockNotFoundException">An ID names no block.</exception>
    /// <exception cref="OperationCanceledException">Cancelled; nothing of the blockset was written.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    ValueTask<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default);

    /// <summary>Lists a blockset's blocks in <c>Index</c> order (the join).</summary>
    /// <param name="blocksetId">The blockset ID.</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The blocks, one per entry, in order.</returns>
    /// <exception cref="BlocksetNotFoundException">No blockset has that ID.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default);

    /// <summary>Gets a blockset's length, full hash and block count.</summary>
    /// <param name="blocksetId">The blockset ID.</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The blockset.</returns>
    /// <exception cref="BlocksetNotFoundException">No blockset has that ID.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default);

    /// <summary>Commits the open batch now, if any; its writes are then durable as far as <c>synchronous</c> allows.</summary>
    /// <param name="cancellationToken">Cancels before the commit.</param>
    /// <returns>A task that completes when the commit has.</returns>
    /// <exception cref="BlockDbException">SQLite failed to commit; the batch is rolled back.</exception>
    ValueTask CommitAsync(CancellationToken cancellationToken = default);

    /// <summary>Rolls the open batch back, if any: its writes are discarded.</summary>
    /// <param name="cancellationToken">Cancels before the rollback.</param>
    /// <returns>A task that completes when the rollback has.</returns>
    ValueTask RollbackAsync(CancellationToken cancellationToken = default);

    /// <summary>Counts blocks, blocksets and blockset entries (committed, plus this session's open batch).</summary>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The counts.</returns>
    ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default);
}
