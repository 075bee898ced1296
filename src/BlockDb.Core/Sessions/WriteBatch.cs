using System.Diagnostics;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Sqlite;

namespace BlockDb.Sessions;

/// <summary>
/// A session's commit batch: the one write transaction (<c>BEGIN IMMEDIATE</c> … <c>COMMIT</c>) its writes run in,
/// its count of pending writes and its age, and the one place where a batch that SQLite rolled back on its own is
/// noticed. Owned by one session and used only inside its gate.
/// </summary>
/// <remarks>
/// Invariants: <see cref="IsOpen"/> is true exactly while this session's transaction is open (it is re-read from
/// <c>sqlite3_get_autocommit</c> after every failed write); a transaction holding no write of its own is never
/// left open after a call (the write lock is not held idle); the participant sees every end of a transaction
/// (<see cref="IBatchParticipant.AfterCommit"/> or <see cref="IBatchParticipant.AfterRollback"/>) exactly once; the
/// session's <see cref="ReadTransaction"/> is ended before the write transaction begins and at every commit or rollback
/// call, so the two are never open together; every successful <c>COMMIT</c> ticks the database's
/// <see cref="CommitClock"/> before the call returns.
/// </remarks>
internal sealed class WriteBatch
{
    private readonly ISqliteConnection _connection;
    private readonly BatchingOptions _options;
    private readonly ISqliteStatement _begin;
    private readonly ISqliteStatement _commit;
    private readonly ISqliteStatement _rollback;
    private readonly ISqliteStatement _savepoint;
    private readonly ISqliteStatement _release;
    private readonly ISqliteStatement _rollbackTo;
    private readonly CommitClock _clock;
    private readonly SessionSettings _settings;
    private readonly TagList _tags;
    private readonly WalWatch? _wal;
    private IBatchParticipant? _participant;
    private long _started;
    private int _held;
    private Exception? _deferred;

    /// <param name="connection">The session's connection.</param>
    /// <param name="settings">The session's settings: when to commit, the commit clock, and what metrics and logs name.</param>
    /// <param name="readsPerTransaction">The resolved <see cref="BatchingOptions.ReadsPerTransaction"/>.</param>
    public WriteBatch(ISqliteConnection connection, SessionSettings settings, int readsPerTransaction)
    {
        _connection = connection;
        _options = settings.Batching;
        _clock = settings.Clock;
        _settings = settings;
        _tags = new TagList { { "db.system.name", "sqlite" }, { "blockdb.provider", settings.Provider } };
        Reads = new ReadTransaction(connection, readsPerTransaction, _options.ReadTransactionMilliseconds, _clock);
        _begin = connection.Prepare(BlockDbSql.Begin);
        _commit = connection.Prepare(BlockDbSql.Commit);
        _rollback = connection.Prepare(BlockDbSql.Rollback);
        _savepoint = connection.Prepare(BlockDbSql.Savepoint);
        _release = connection.Prepare(BlockDbSql.ReleaseSavepoint);
        _rollbackTo = connection.Prepare(BlockDbSql.RollbackToSavepoint);
        _wal = settings.AppliedPragmas.JournalMode == JournalMode.Wal && !settings.ReadOnly ? new WalWatch(settings.Path) : null;
    }

    /// <summary>The session's read batch (reads outside a write transaction).</summary>
    public ReadTransaction Reads { get; }

    /// <summary>Whether this session's write transaction is open (it then holds the write lock).</summary>
    public bool IsOpen { get; private set; }

    /// <summary>Counts the transactions this batch has begun: what a session checked inside one transaction holds until this moves.</summary>
    public long Transaction { get; private set; }

    /// <summary>
    /// Counts the changes inside a transaction after which what this session read under the write lock may no longer
    /// hold: its garbage collections, its volume state changes and its rolled-back savepoints. A check cached for a transaction is cached for
    /// (<see cref="Transaction"/>, <see cref="Revision"/>).
    /// </summary>
    public long Revision { get; private set; }

    /// <summary>
    /// The token of the caller's call inside the session's gate (<see langword="default"/> between calls and for the age
    /// timer's commit), set and cleared by the session around each call: work of the call too long to be left
    /// uncancellable, such as the key map's first load from its snapshot file, checks it.
    /// </summary>
    public CancellationToken CallCancellation { get; set; }

    /// <summary>Writes in the open batch, not yet committed.</summary>
    public int Pending { get; private set; }

    /// <summary>Milliseconds since the open batch began (0 when none is open).</summary>
    public long AgeMilliseconds => IsOpen ? (long)Stopwatch.GetElapsedTime(_started).TotalMilliseconds : 0;

    /// <summary>Called after a batch opens (the age timer arms itself).</summary>
    public Action? Opened { get; set; }

    /// <summary>Before a read: joins the session's read batch unless the write transaction is open (a read inside it sees the batch's own writes).</summary>
    public void EnterRead()
    {
        if (!IsOpen)
        {
            Reads.Enter();
        }
    }

    /// <summary>Records a change after which checks cached for this transaction must be made again (moves <see cref="Revision"/>).</summary>
    public void Revise() => Revision++;

    /// <summary>Joins the block store that must see the ends of each transaction.</summary>
    public void Attach(IBatchParticipant participant) => _participant = participant;

    /// <summary>
    /// Runs one write inside the batch, opening it first. A failure leaves the batch's earlier writes intact; when
    /// SQLite rolled the whole transaction back it becomes <see cref="BlockDbBatchRolledBackException"/>; a
    /// transaction that holds no write after the failure is ended so the write lock is not kept.
    /// </summary>
    public TResult Write<TState, TResult>(TState state, Func<TState, TResult> write)
    {
        try
        {
            Begin();
            return write(state);
        }
        catch (Exception e) when (Lost(e) is { } lost)
        {
            throw lost;
        }
        catch
        {
            ReleaseIdle();
            throw;
        }
    }

    /// <summary>
    /// Runs <paramref name="body"/> inside a savepoint of the open batch: all of its writes, or (on any failure or
    /// cancellation) none. A rollback to the savepoint also takes back what the body counted (<see cref="Pending"/>) and
    /// what the block store kept of it (<see cref="IBatchParticipant.AfterRollbackTo"/>). When the savepoint cannot be
    /// rolled back, the whole batch is, so nothing of the body can commit with the batch's other writes.
    /// </summary>
    /// <exception cref="BlockDbBatchRolledBackException">The rollback to the savepoint failed and the batch was rolled back with it.</exception>
    public TResult InSavepoint<TState, TResult>(TState state, Func<TState, TResult> body)
    {
        var (pending, mark) = (Pending, _participant?.SavepointMark ?? 0);
        _savepoint.ExecuteNonQuery();
        try
        {
            var result = body(state);
            _release.ExecuteNonQuery();
            return result;
        }
        catch (Exception e) when (_connection.InTransaction)
        {
            Revise();
            try
            {
                _rollbackTo.ExecuteNonQuery();
                _release.ExecuteNonQuery();
            }
            catch (BlockDbException undo)
            {
                var lost = Pending;
                Rollback();
                throw new BlockDbBatchRolledBackException(
                    $"{undo.Message} A write failed ({e.Message}) and rolling back to its savepoint failed too, so the open batch was rolled back: its {lost} uncommitted writes were discarded (committed data is intact).",
                    lost,
                    undo);
            }

            Pending = pending;
            _participant?.AfterRollbackTo(mark);
            throw;
        }
        catch
        {
            // SQLite ended the transaction itself (Lost reports it): nothing of the savepoint is left to undo.
            Revise();
            throw;
        }
    }

    /// <summary>
    /// Runs <paramref name="body"/> in the open batch as one whole: its commits held (<see cref="Held"/>) and its writes
    /// inside a savepoint (<see cref="InSavepoint"/>), so they are all in the transaction when it returns, or none of them
    /// when it throws or is cancelled. The caller's own <see cref="EndWrite"/> afterwards commits as usual.
    /// </summary>
    /// <exception cref="InvalidOperationException">The batch is not open.</exception>
    public TResult Whole<TState, TResult>(TState state, Func<TState, TResult> body) =>
        Held((this, state, body), static h => h.Item1.InSavepoint(h, static s => s.body(s.state)));

    /// <summary>
    /// Runs <paramref name="body"/> inside the open batch with its commits held: an <see cref="EndWrite"/> in it counts
    /// its write but neither commits nor closes the transaction, so what the body reads stays true for what the caller
    /// writes after it in the same transaction. The caller's own <see cref="EndWrite"/> afterwards commits as usual.
    /// </summary>
    /// <exception cref="InvalidOperationException">The batch is not open.</exception>
    public TResult Held<TState, TResult>(TState state, Func<TState, TResult> body)
    {
        RequireOpen();
        _held++;
        try
        {
            return body(state);
        }
        finally
        {
            _held--;
        }
    }

    /// <summary>Throws unless this session's write transaction is open.</summary>
    /// <exception cref="InvalidOperationException">The batch is not open.</exception>
    public void RequireOpen()
    {
        if (!IsOpen)
        {
            throw new InvalidOperationException("This write must run inside the session's open write transaction.");
        }
    }

    /// <summary>Counts a finished write and commits when the batch is full or old; a transaction that holds no write is closed at once. Inside <see cref="Held"/> it only counts.</summary>
    public void EndWrite(bool wrote)
    {
        if (wrote)
        {
            Pending++;
        }

        if (_held > 0)
        {
            return;
        }

        if (Pending == 0
            || (_options.CommitEvery > 0 && Pending >= _options.CommitEvery)
            || (_options.CommitAfterMilliseconds is { } ms && AgeMilliseconds >= ms))
        {
            Commit();
        }
    }

    /// <summary>Commits the open batch, if any.</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed; the batch was rolled back.</exception>
    public void Commit()
    {
        if (!IsOpen)
        {
            Reads.End();
            return;
        }

        var pending = Pending;
        using var activity = Instruments.ActivitySource.StartActivity("blockdb.commit");
        activity?.SetTag("blockdb.commit.writes", pending);
        var started = Stopwatch.GetTimestamp();
        var committing = false;
        if (_wal is not null && !_wal.Unchanged())
        {
            RollBackForLostWal(pending);
        }

        try
        {
            _participant?.BeforeCommit();
            committing = true;
            _commit.ExecuteNonQuery();
        }
        catch (BlockDbException e)
        {
            Rolled("failed", pending, e);

            // SQLITE_BUSY leaves the transaction open (nothing was written): rolled back below, certainly lost. Any
            // other failure that ended the transaction may have come after the commit point (in rollback-journal
            // modes, deleting the journal after the database file was written): then the outcome is unknown.
            var stillOpen = _connection.InTransaction;
            var unknown = committing && !stillOpen && !e.IsTransient;
            BlockDbException? rollbackFailure = null;
            try
            {
                if (stillOpen)
                {
                    _rollback.ExecuteNonQuery();
                }
            }
            catch (BlockDbException r)
            {
                // Reported with the commit's failure below, never instead of it; Begin ends a transaction left open.
                rollbackFailure = r;
            }
            finally
            {
                End(committed: false);
            }

            throw new BlockDbBatchRolledBackException(
                unknown
                    ? $"{e.Message} The COMMIT failed after SQLite may have made the batch durable: whether its {pending} writes are in the file is unknown. Repeat them (select-xor-insert returns the ID of a block that did commit); data committed before is intact."
                    : $"{e.Message} The commit failed and its batch of {pending} writes was rolled back{(rollbackFailure is null ? string.Empty : $" (the ROLLBACK also failed: {rollbackFailure.Message}; the next write ends the transaction first)")} (committed data is intact).",
                pending,
                e,
                unknown);
        }

        End(committed: true);
        Committed(pending, Stopwatch.GetElapsedTime(started));
    }

    /// <summary>
    /// The WAL this connection writes to is no longer the database's (<see cref="WalWatch"/>): a <c>COMMIT</c> would be
    /// acknowledged and then lost, so the batch is rolled back instead and the caller told why. Every later commit of the
    /// session is refused the same way; a session opened after a new WAL exists records that one.
    /// </summary>
    /// <exception cref="BlockDbBatchRolledBackException">Always: <c>SQLITE_READONLY_DBMOVED</c>, the batch's writes not in the file.</exception>
    private void RollBackForLostWal(int pending)
    {
        try
        {
            if (_connection.InTransaction)
            {
                _rollback.ExecuteNonQuery();
            }
        }
        catch (BlockDbException)
        {
            // Begin ends a transaction left open; the caller must learn about the WAL, not about this.
        }
        finally
        {
            End(committed: false);
        }

        var cause = new BlockDbException(
            $"The WAL file '{_wal!.WalPath}' was deleted or replaced while this session's connection had it open: SQLite would write this commit into a file that is no longer the database's, and it would be lost when the last connection closes (https://www.sqlite.org/howtocorrupt.html).",
            SqliteResultCode.ReadOnly,
            SqliteResultCode.ReadOnlyDbMoved);
        Rolled("wal-lost", pending, cause);
        throw new BlockDbBatchRolledBackException(
            $"{cause.Message} The batch of {pending} writes was rolled back, not committed. Commits acknowledged since the last checkpoint were in that WAL and may be lost too; close every connection to the file in every process, check it (CheckAsync), and write again what is missing.",
            pending,
            cause);
    }

    /// <summary>Rolls the open batch back, if any.</summary>
    public void Rollback()
    {
        if (!IsOpen)
        {
            Reads.Abandon();
            return;
        }

        var pending = Pending;
        try
        {
            if (_connection.InTransaction)
            {
                _rollback.ExecuteNonQuery();
            }
        }
        finally
        {
            End(committed: false);
            Rolled("requested", pending, null);
        }
    }

    /// <summary>Keeps a failure of background work (an age commit) to be thrown by the session's next call.</summary>
    public void Defer(Exception failure) => _deferred ??= failure;

    /// <summary>Throws the kept background failure, once.</summary>
    public void ThrowDeferred()
    {
        if (_deferred is { } failure)
        {
            _deferred = null;
            throw failure;
        }
    }

    private void Begin()
    {
        if (IsOpen)
        {
            if (!_connection.InTransaction)
            {
                // Ended under us by a failure this batch did not see: never write outside the write lock.
                var lost = Pending;
                End(committed: false);
                throw new BlockDbBatchRolledBackException($"The open batch's transaction was rolled back by SQLite after an earlier failure; its {lost} uncommitted writes were discarded (committed data is intact). Nothing was written by this call.", lost, new BlockDbException("The transaction is no longer active.", SqliteResultCode.Error, SqliteResultCode.Error));
            }

            return;
        }

        // A write never runs in a read snapshot: it would see stale rows and could fail to upgrade (SQLITE_BUSY_SNAPSHOT).
        Reads.End();
        if (_connection.InTransaction)
        {
            // Left open by a ROLLBACK that failed after a failed COMMIT (Commit said so): no batch of this session
            // is open, so it holds nothing that was acknowledged.
            _rollback.ExecuteNonQuery();
        }

        _begin.ExecuteNonQuery();
        _wal?.Record();
        IsOpen = true;
        Transaction++;
        _started = Stopwatch.GetTimestamp();
        Opened?.Invoke();
    }

    /// <summary>After a failed write, a transaction that holds no write of its own is ended, so the write lock is not kept while idle (never inside <see cref="Held"/>: the caller's unit is still open).</summary>
    private void ReleaseIdle()
    {
        if (IsOpen && Pending == 0 && _held == 0)
        {
            try
            {
                Commit();
            }
            catch (BlockDbException)
            {
                // The write's own failure is what the caller must see; the batch is closed either way.
            }
        }
    }

    /// <summary>
    /// Some SQLite errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY, SQLITE_NOMEM) roll back the whole transaction
    /// (<see href="https://www.sqlite.org/lang_transaction.html"/>). When that happened the batch's writes are gone:
    /// close it and say so. Runs as an exception filter, so it only reads state and runs no statement. The session
    /// also runs it after any failed call (a read that spills the page cache can hit SQLITE_FULL too).
    /// </summary>
    public BlockDbBatchRolledBackException? Lost(Exception e)
    {
        if (!IsOpen || _connection.InTransaction)
        {
            return null;
        }

        var lost = Pending;
        End(committed: false);
        Rolled("lost", lost, e);

        // Whatever the failure's type, the caller must learn that the batch is gone (its earlier writes with it).
        var cause = e as BlockDbException ?? new BlockDbException($"{e.GetType().Name}: {e.Message}", e);
        return new BlockDbBatchRolledBackException($"{cause.Message} SQLite rolled back the open batch: its {lost} uncommitted writes were discarded (committed data is intact).", lost, cause);
    }

    private void End(bool committed)
    {
        if (committed)
        {
            // First, so nothing that shows the batch as ended (PendingWrites) is seen before other sessions' snapshots restart.
            _clock.Tick();
        }

        IsOpen = false;
        Pending = 0;
        if (committed)
        {
            _participant?.AfterCommit();
        }
        else
        {
            _participant?.AfterRollback();
        }
    }

    /// <summary>A slower <c>COMMIT</c> than this is logged (event 20, SlowCommit).</summary>
    public const int SlowCommitMilliseconds = 1000;

    private void Committed(int writes, TimeSpan elapsed)
    {
        if (Instruments.Commits.Enabled)
        {
            Instruments.Commits.Add(1, _tags);
        }

        if (Instruments.CommitDuration.Enabled)
        {
            Instruments.CommitDuration.Record(elapsed.TotalSeconds, _tags);
        }

        if (Instruments.CommitWrites.Enabled)
        {
            Instruments.CommitWrites.Record(writes, _tags);
        }

        if (elapsed.TotalMilliseconds > SlowCommitMilliseconds)
        {
            Log.SlowCommit(_settings.Logger, writes, _settings.Path, (long)elapsed.TotalMilliseconds, SlowCommitMilliseconds);
        }
    }

    private void Rolled(string reason, int writes, Exception? error)
    {
        if (Instruments.Rollbacks.Enabled)
        {
            var tags = _tags;
            tags.Add("blockdb.reason", reason);
            Instruments.Rollbacks.Add(1, tags);
        }

        if (error is not null)
        {
            Log.BatchRolledBack(_settings.Logger, writes, _settings.Path, reason, error.Message);
        }
    }
}
