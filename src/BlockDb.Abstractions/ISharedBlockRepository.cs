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
/// with that error and none of them is acknowledged. A write's cancellation token cancels it while it is queued.
/// Disposing waits for queued writes to commit and reads in flight to end; calls made after disposal throw
/// <see cref="ObjectDisposedException"/>. The write calls return a <c>ValueTask</c> over the write's task, which
/// completes once its group commit has.
/// </remarks>
public interface ISharedBlockRepository : IBlockReader, IBlockWriter, IAsyncDisposable, IDisposable
{
    /// <summary>Transactions committed so far by the writer (for reporting the batching achieved).</summary>
    long CommittedBatches { get; }

    /// <summary>Writes acknowledged so far.</summary>
    long AcknowledgedWrites { get; }
}
