namespace BlockDb;

/// <summary>
/// A session on the block index: the reads and writes of a backup engine on one connection, with its own commit batch
/// (<see cref="BatchingOptions"/>). Not thread-safe: one call at a time; a concurrent call throws
/// <see cref="InvalidOperationException"/>. Open one session per task, or use <see cref="ISharedBlockSession"/>.
/// </summary>
/// <remarks>
/// SQLite does its work synchronously, so the <c>ValueTask</c>s complete before they are returned and cost no
/// allocation (as Microsoft.Data.Sqlite's own <c>*Async</c> methods). <c>AddBlocksetAsync</c> also checks its token
/// between blocks and then writes nothing. Reads see the session's own uncommitted writes. Disposing a session waits
/// for a call in flight, then commits or rolls back the open batch as <see cref="BatchingOptions.OnDispose"/> says; a
/// second dispose, concurrent or later, returns only when that is done.
/// </remarks>
public interface IBlockSession : IBlockReader, IBlockWriter, IAsyncDisposable, IDisposable
{
    /// <summary>Write operations in the open batch, not yet committed. Always 0 on a caller's connection (<c>BlockDatabaseBuilder.UseCallerConnection</c>): BlockDb keeps no batch there and cannot see the caller's commits.</summary>
    int PendingWrites { get; }

    /// <summary>Commits the open batch now, if any; its writes are then durable as far as <c>synchronous</c> allows.</summary>
    /// <param name="cancellationToken">Cancels before the commit.</param>
    /// <returns>A task that completes when the commit has.</returns>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed, or an earlier failure (an age commit, SQLite rolling the transaction back) lost the batch; <see cref="BlockDbBatchRolledBackException.LostWrites"/> says how many writes are not in the file. Everything committed before is intact.</exception>
    /// <exception cref="InvalidOperationException">The session runs on a caller's connection (<c>BlockDatabaseBuilder.UseCallerConnection</c>): the transaction is the caller's, and the caller commits it.</exception>
    ValueTask CommitAsync(CancellationToken cancellationToken = default);

    /// <summary>Rolls the open batch back, if any: its writes are discarded.</summary>
    /// <param name="cancellationToken">Cancels before the rollback.</param>
    /// <returns>A task that completes when the rollback has.</returns>
    /// <exception cref="InvalidOperationException">The session runs on a caller's connection (<c>BlockDatabaseBuilder.UseCallerConnection</c>): the transaction is the caller's, and the caller rolls it back.</exception>
    ValueTask RollbackAsync(CancellationToken cancellationToken = default);
}
