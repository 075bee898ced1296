namespace BlockDb;

/// <summary>
/// The write calls of a block index, the same on a session (<see cref="IBlockRepository"/>: written in the session's
/// commit batch, durable once it commits) and on the shared repository (<see cref="ISharedBlockRepository"/>: each call
/// completes once the group commit holding it has committed).
/// </summary>
/// <remarks>
/// Every call checks its <see cref="CancellationToken"/> first. A failed write writes nothing of its own and leaves
/// earlier writes of the batch intact, unless the database rolled the whole batch back
/// (<see cref="BlockDbBatchRolledBackException"/>). Invalid input throws <see cref="ArgumentException"/> before
/// anything is written; a read-only database refuses every write with <see cref="BlockDbReadOnlyException"/>.
/// </remarks>
public interface IBlockWriter
{
    /// <summary>Inserts a new block. Counts as one write of the batch.</summary>
    /// <param name="hash">The block hash (base64).</param>
    /// <param name="size">The block size in bytes.</param>
    /// <param name="cancellationToken">Cancels before the insert.</param>
    /// <returns>The new block's ID.</returns>
    /// <exception cref="ArgumentException">The hash or size is invalid.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The block exists (<c>SQLITE_CONSTRAINT_UNIQUE</c>, 2067), or the database failed.</exception>
    ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default);

    /// <summary>
    /// Finds a block's ID, inserting the block when absent (select-xor-insert). An insert counts as one write of the
    /// batch; a find does not. How the indexed layouts do it is <see cref="BlockDbOptions.SelectXorInsert"/>; the KeyMap
    /// layout looks the block up in its key map, then inserts it under the write lock.
    /// </summary>
    /// <param name="hash">The block hash (base64).</param>
    /// <param name="size">The block size in bytes.</param>
    /// <param name="cancellationToken">Cancels before the lookup.</param>
    /// <returns>The ID and whether this call created the block.</returns>
    /// <exception cref="ArgumentException">The hash or size is invalid.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default);

    /// <summary>
    /// Adds a blockset from its blocks in order, named by hash and size; each must already be in the index. Its
    /// <c>Length</c> is the sum of the sizes in bytes. All of it is written, or nothing. Counts as one write.
    /// </summary>
    /// <param name="blocks">The blocks in file order; at least one.</param>
    /// <param name="fullHash">The hash of the whole content (base64), or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Checked before and between blocks.</param>
    /// <returns>The new blockset's ID.</returns>
    /// <exception cref="ArgumentException">The list is null or empty, or a hash or size is invalid (<see cref="ArgumentOutOfRangeException"/> when the sizes add up to more than <see cref="long.MaxValue"/> bytes).</exception>
    /// <exception cref="BlockNotFoundException">A block is not in the index.</exception>
    /// <exception cref="OperationCanceledException">Cancelled; nothing of the blockset was written.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default);

    /// <summary>Adds a blockset from its block IDs in order. Its <c>Length</c> is the sum of the blocks' sizes in bytes. All of it is written, or nothing. Counts as one write.</summary>
    /// <param name="blockIds">The block IDs in file order; at least one.</param>
    /// <param name="fullHash">The hash of the whole content (base64), or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Checked before and between blocks.</param>
    /// <returns>The new blockset's ID.</returns>
    /// <exception cref="ArgumentException">The list is null or empty, or the full hash is invalid (<see cref="ArgumentOutOfRangeException"/> when the blocks' sizes add up to more than <see cref="long.MaxValue"/> bytes).</exception>
    /// <exception cref="BlockNotFoundException">An ID names no block.</exception>
    /// <exception cref="OperationCanceledException">Cancelled; nothing of the blockset was written.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default);
}
