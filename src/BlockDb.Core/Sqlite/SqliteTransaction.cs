using System.Diagnostics;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Sessions;
using BlockDb.Sql;

namespace BlockDb.Sqlite;

/// <summary>
/// A session's SQLite write transaction, the mechanics only: <c>BEGIN IMMEDIATE</c>, <c>COMMIT</c>, <c>ROLLBACK</c>,
/// savepoints, the participant (the layout session's, KeyMap's <c>KeyMapWrites</c>) told of every end, the <see cref="CommitClock"/>, and what a failed
/// <c>COMMIT</c> means. When to commit is <see cref="CommitPolicy"/>'s. Owned by one session, used inside its gate.
/// </summary>
/// <remarks>
/// <see cref="IsOpen"/> is true exactly while this session's transaction is open (the session compares it with
/// <c>sqlite3_get_autocommit</c> after every failed call [B2]); the participant sees every end exactly once; the
/// <see cref="ReadTransaction"/> ends before the write transaction begins [R1]; every successful <c>COMMIT</c> ticks the
/// <see cref="CommitClock"/> before the call returns [R3].
/// </remarks>
internal sealed partial class SqliteTransaction
{
    private readonly ISqliteConnection _connection;
    private readonly ISqliteStatement _begin, _commit, _rollback, _savepoint, _release, _rollbackTo;
    private readonly CommitClock _clock;
    private readonly TransactionMetrics _metrics;
    private readonly WalWatch? _wal;
    private IBatchParticipant? _participant;
    private long _started;

    /// <param name="connection">The session's connection.</param>
    /// <param name="settings">The session's settings.</param>
    /// <param name="readsPerTransaction">The resolved <see cref="BatchingOptions.ReadsPerTransaction"/>.</param>
    public SqliteTransaction(ISqliteConnection connection, SessionSettings settings, int readsPerTransaction)
    {
        _connection = connection;
        _clock = settings.Clock;
        _metrics = new TransactionMetrics(settings);
        Reads = new ReadTransaction(connection, readsPerTransaction, settings.Batching.ReadTransactionMilliseconds, _clock);
        _begin = connection.Prepare(BlockDbSql.Begin);
        _commit = connection.Prepare(BlockDbSql.Commit);
        _rollback = connection.Prepare(BlockDbSql.Rollback);
        _savepoint = connection.Prepare(BlockDbSql.Savepoint);
        _release = connection.Prepare(BlockDbSql.ReleaseSavepoint);
        _rollbackTo = connection.Prepare(BlockDbSql.RollbackToSavepoint);
        _wal = settings.AppliedPragmas.JournalMode == JournalMode.Wal && !settings.ReadOnly ? new WalWatch(settings.Path) : null;
    }

    /// <summary>The session's read transaction (reads outside a write transaction).</summary>
    public ReadTransaction Reads { get; }

    /// <summary>Whether this session's write transaction is open (it then holds the write lock).</summary>
    public bool IsOpen { get; private set; }

    /// <summary>Counts the transactions begun: what a session checked inside one transaction holds until this moves.</summary>
    public long Transaction { get; private set; }

    /// <summary>Counts changes after which what was read under the write lock may not hold (collections, volume states, savepoint rollbacks); checks are cached per (<see cref="Transaction"/>, <see cref="Revision"/>).</summary>
    public long Revision { get; private set; }

    /// <summary>The token of the call inside the session's gate (<see langword="default"/> between calls), for work too long to be left uncancellable (the key map's first load).</summary>
    public CancellationToken CallCancellation { get; set; }

    /// <summary>Writes in the open transaction, not yet committed.</summary>
    public int Pending { get; private set; }

    /// <summary>Milliseconds since the open transaction began (0 when none is open).</summary>
    public long AgeMilliseconds => IsOpen ? (long)Stopwatch.GetElapsedTime(_started).TotalMilliseconds : 0;

    /// <summary>Called after a transaction opens (the idle timer arms itself).</summary>
    public Action? Opened { get; set; }

    /// <summary>Whether SQLite ended the open transaction on its own (SQLITE_FULL, IOERR, BUSY, NOMEM roll it back: <see href="https://www.sqlite.org/lang_transaction.html"/>). Reads state only [B2].</summary>
    public bool EndedBySqlite => IsOpen && !_connection.InTransaction;

    /// <summary>Before a read: joins the read transaction unless the write transaction is open (a read inside it sees its own writes).</summary>
    public void EnterRead()
    {
        if (!IsOpen)
        {
            Reads.Enter();
        }
    }

    /// <summary>Records a change after which checks cached for this transaction must be made again.</summary>
    public void Revise() => Revision++;

    /// <summary>Joins the layout session's part that must see the ends of each transaction.</summary>
    public void Attach(IBatchParticipant participant) => _participant = participant;

    /// <summary>Counts one write of the call in the open transaction (the policy commits between calls).</summary>
    public void Wrote() => Pending++;

    /// <summary>Runs one write inside the transaction, beginning it first. A failure is the call's to handle (<see cref="CommitPolicy.Failing"/>).</summary>
    public TResult Write<TState, TResult>(TState state, Func<TState, TResult> write)
    {
        Begin();
        return write(state);
    }

    /// <exception cref="InvalidOperationException">The transaction is not open.</exception>
    public void RequireOpen()
    {
        if (!IsOpen)
        {
            throw Errors.NotInWriteTransaction();
        }
    }

    /// <summary>Commits the open transaction, if any; else ends the read transaction.</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed: rolled back, or its outcome unknown [B3].</exception>
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
            _metrics.Rolled("failed", pending, e);

            // SQLITE_BUSY leaves the transaction open (nothing was written): rolled back below, certainly lost. Any
            // other failure that ended the transaction may have come after the commit point (in rollback-journal
            // modes, deleting the journal after the database file was written): then the outcome is unknown [B3].
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
                // Reported with the commit's failure, never instead of it; Begin ends a transaction left open.
                rollbackFailure = r;
            }
            finally
            {
                End(committed: false);
            }

            throw Errors.CommitFailed(e, pending, unknown, rollbackFailure);
        }

        End(committed: true);
        _metrics.Committed(pending, Stopwatch.GetElapsedTime(started));
    }

    /// <summary>The WAL this connection writes to is no longer the database's (<see cref="WalWatch"/>): a <c>COMMIT</c> would be acknowledged and lost, so roll back and say why.</summary>
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

        var cause = Errors.WalLost(_wal!.WalPath);
        _metrics.Rolled("wal-lost", pending, cause);
        throw Errors.BatchRolledBackForLostWal(cause, pending);
    }

    /// <summary>Rolls the open transaction back, if any; else abandons the read transaction.</summary>
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
            _metrics.Rolled("requested", pending, null);
        }
    }

    /// <summary>Closes the books on a transaction SQLite ended on its own (<see cref="EndedBySqlite"/>); runs no statement, so an exception filter may call it. Returns its writes.</summary>
    public int EndLost(Exception e)
    {
        var lost = Pending;
        End(committed: false);
        _metrics.Rolled("lost", lost, e);
        return lost;
    }

    /// <summary>Begins the write transaction unless it is open [R1].</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The open transaction was ended by SQLite after a failure this session did not see [B2].</exception>
    public void Begin()
    {
        if (IsOpen)
        {
            if (!_connection.InTransaction)
            {
                // Ended under us by a failure this transaction did not see: never write outside the write lock.
                var lost = Pending;
                End(committed: false);
                throw Errors.BatchEndedEarlier(lost);
            }

            return;
        }

        // A write never runs in a read snapshot: it would see stale rows and could fail to upgrade (SQLITE_BUSY_SNAPSHOT).
        Reads.End();
        if (_connection.InTransaction)
        {
            // Left open by a ROLLBACK that failed after a failed COMMIT: no batch of this session is open, so it holds nothing acknowledged.
            _rollback.ExecuteNonQuery();
        }

        _begin.ExecuteNonQuery();
        _wal?.Record();
        IsOpen = true;
        Transaction++;
        _started = Stopwatch.GetTimestamp();
        Opened?.Invoke();
    }

    private void End(bool committed)
    {
        if (committed)
        {
            // First, so nothing that shows the batch as ended (PendingWrites) is seen before other sessions' snapshots restart [R3].
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
}
