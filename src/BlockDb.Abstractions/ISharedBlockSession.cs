namespace BlockDb;

/// <summary>
/// A thread-safe session for many concurrent tasks on one database. A write completes only once its transaction has
/// committed; reads run on pooled connections and see committed data only. Open it with
/// <see cref="IBlockDatabase.OpenSharedSession"/>.
/// </summary>
/// <remarks>
/// On SQLite one writer connection commits the queued writes of many callers as one transaction (group commit), so
/// callers never meet <c>SQLITE_BUSY</c> from each other; on PostgreSQL each write commits on a pooled connection.
/// A write call is whole: all its rows are in the file when it returns, none when it throws, unless the failure ended
/// the whole transaction (<see cref="BlockDbBatchRolledBackException"/>; on a server, a lost connection's
/// <see cref="BlockDbException"/>). On PostgreSQL a span select-xor-insert that meets a block another task collects
/// between its insert and its lookup throws after its own new blocks committed: repeat the call. On PostgreSQL a
/// select-xor-insert sent again after a lost connection reports a block it found as created (the lost send may have
/// created it): upload it. A call's token is
/// honoured until its writes are in the transaction that commits them, never after. Dispose waits for queued writes
/// to commit; later calls throw <see cref="ObjectDisposedException"/>. Invariants S1–S3 of docs/ARCHITECTURE.md.
/// </remarks>
public interface ISharedBlockSession : IBlockReader, IBlockWriter, IAsyncDisposable, IDisposable
{
    /// <summary>Transactions committed so far with at least one write (on PostgreSQL, one per acknowledged write).</summary>
    long CommittedBatches { get; }

    /// <summary>Writes acknowledged so far.</summary>
    long AcknowledgedWrites { get; }
}
