namespace BlockDb;

/// <summary>
/// A thread-safe session for many concurrent tasks on one database. Each write call (insert, select-xor-insert of
/// a new block, add blockset) completes only once its transaction has committed, so a completed write is
/// acknowledged (durable as far as <c>synchronous</c> allows). On SQLite the writes go through one writer connection
/// that groups concurrent calls into shared transactions (group commit), so callers never see <c>SQLITE_BUSY</c>
/// from contention between their own tasks; on PostgreSQL each write commits on its own pooled connection, and the
/// server's row locks order concurrent writers. Reads (find, list, get, counts) run on pooled reader connections
/// and see committed data only.
/// </summary>
/// <remarks>
/// <para>
/// On SQLite, select-xor-insert first looks the block up on a reader; only a miss is queued for the writer, which looks
/// it up again inside its transaction before inserting. Disposing waits for queued writes to commit and reads in flight to
/// end; calls made after disposal throw <see cref="ObjectDisposedException"/>. The write calls return a
/// <c>ValueTask</c> over the write's task, which completes once its group commit has.
/// </para>
/// <para>
/// <b>A write is whole.</b> A write call that fails wrote nothing: every row it would have written, a many-block call's
/// blocks and a one-call file's blocks included, is in the file once the call returns, or none of them is when it
/// throws. The one exception is a failure that ends the whole transaction (disk full, I/O error, a lost connection):
/// then the call says so (<see cref="BlockDbBatchRolledBackException"/>, or on a server the <see cref="BlockDbException"/>
/// of the lost connection, whose outcome is unknown) and nothing of it was acknowledged. A block that another call
/// wrote is not this call's: a select-xor-insert that finds it returns its ID whatever happens to the other call.
/// (On a server, a many-block select-xor-insert that meets a block another task's collection deletes between its
/// insert and its lookup throws <see cref="BlockDbException"/> after its own new blocks committed; repeating the call
/// returns them.)
/// </para>
/// <para>
/// <b>Cancellation</b> is honoured until the call's writes are all in the transaction that commits them, never after:
/// a call that throws <see cref="OperationCanceledException"/> wrote nothing, and a call whose writes were all made
/// completes with their commit (its result) even if its token is cancelled meanwhile. On SQLite a call is cancellable
/// while it is queued and while the writer runs its statements (a cancelled call's statements are rolled back to the
/// savepoint it runs in, leaving the group's other writes); once they have run, it waits for the group's
/// <c>COMMIT</c>. On a server (PostgreSQL) a write is cancellable until its statements are sent (while it waits for a
/// connection); once sent, it completes.
/// </para>
/// </remarks>
public interface ISharedBlockSession : IBlockReader, IBlockWriter, IAsyncDisposable, IDisposable
{
    /// <summary>Transactions committed so far with at least one write (for reporting the batching achieved; on PostgreSQL one per acknowledged write).</summary>
    long CommittedBatches { get; }

    /// <summary>Writes acknowledged so far.</summary>
    long AcknowledgedWrites { get; }
}
