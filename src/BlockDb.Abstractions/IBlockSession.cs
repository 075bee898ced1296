namespace BlockDb;

/// <summary>
/// A session on the block index: the reads and writes of a backup engine on one connection, with its own commit batch
/// (<see cref="BatchingOptions"/>). Not thread-safe: one call at a time; a concurrent call throws
/// <see cref="InvalidOperationException"/>. Open one session per task, or use <see cref="ISharedBlockSession"/>.
/// </summary>
/// <remarks>
/// On SQLite the <c>ValueTask</c>s complete before they are returned, so they allocate nothing. Reads see the
/// session's own uncommitted writes. Dispose waits for a call in flight, then commits or rolls back the open batch as
/// <see cref="BatchingOptions.OnDispose"/> says; a second dispose returns only when that is done.
/// </remarks>
public interface IBlockSession : IBlockReader, IBlockWriter, IAsyncDisposable, IDisposable
{
    /// <summary>Write operations in the open batch, not yet committed; always 0 on a caller's connection (<c>UseCallerConnection</c>), where the batch is the caller's.</summary>
    int PendingWrites { get; }

    /// <summary>Commits the open batch now, if any; its writes are then durable as far as <c>synchronous</c> allows.</summary>
    /// <param name="cancellationToken">Cancels before the commit.</param>
    /// <returns>A task that completes when the commit has.</returns>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed, or an earlier failure (an age commit, SQLite rolling the transaction back) lost the batch; <see cref="BlockDbBatchRolledBackException.LostWrites"/> writes are not in the file, and everything committed before is.</exception>
    /// <exception cref="InvalidOperationException">The session runs on a caller's connection: the caller commits.</exception>
    ValueTask CommitAsync(CancellationToken cancellationToken = default);

    /// <summary>Rolls the open batch back, if any: its writes are discarded.</summary>
    /// <param name="cancellationToken">Cancels before the rollback.</param>
    /// <returns>A task that completes when the rollback has.</returns>
    /// <exception cref="InvalidOperationException">The session runs on a caller's connection: the caller rolls back.</exception>
    ValueTask RollbackAsync(CancellationToken cancellationToken = default);
}
