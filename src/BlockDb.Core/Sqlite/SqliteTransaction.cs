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
/// <see cref="EngineTransaction.IsOpen"/> is true exactly while this session's transaction is open (the session compares it with
/// <c>sqlite3_get_autocommit</c> after every failed call [B2]); the participant sees every end exactly once; the
/// <see cref="ReadTransaction"/> ends before the write transaction begins [R1]; every successful <c>COMMIT</c> ticks the
/// <see cref="CommitClock"/> before the call returns [R3].
/// <para>
/// <see cref="EngineTransaction.External"/> (a caller's connection and transaction): no <c>BEGIN</c>, <c>COMMIT</c> or <c>ROLLBACK</c> is
/// even prepared [X1]. <see cref="Begin"/> requires the caller's transaction open [X2] and opens the call's step, the
/// savepoint <c>"BlockDbStep"</c> (<see cref="BeginForOneWrite"/>: a step without a savepoint, for a call whose one write
/// undoes itself); <see cref="EngineTransaction.IsOpen"/> is true while the step is open; the step is released
/// (<see cref="ReleaseStep"/>) or undone (<see cref="UndoStep"/>) before the call returns; <see cref="AllOrNothing"/> inside
/// a step savepoint adds no savepoint of its own. There is no read transaction,
/// no WAL watch and no commit clock tick: BlockDb has no other connection to the file [X3]. The participant sees no
/// ends: what the caller commits or rolls back later is not BlockDb's to see.
/// </para>
/// </remarks>
internal sealed partial class SqliteTransaction : EngineTransaction
{
    private readonly ISqliteConnection _connection;
    private readonly ISqliteStatement? _begin, _commit, _rollback;
    private readonly ISqliteStatement _savepoint, _release, _rollbackTo;
    private readonly ISqliteStatement? _stepBegin, _stepRelease, _stepUndo;
    private readonly CommitClock _clock;
    private readonly TransactionMetrics _metrics;
    private readonly WalWatch? _wal;
    private IBatchParticipant? _participant;

    // External: whether the open step is the savepoint "BlockDbStep" (false: a call of one atomic write opened none).
    private bool _stepSavepoint;

    /// <param name="connection">The session's connection.</param>
    /// <param name="settings">The session's settings.</param>
    /// <param name="readsPerTransaction">The resolved <see cref="BatchingOptions.ReadsPerTransaction"/>.</param>
    public SqliteTransaction(ISqliteConnection connection, SessionSettings settings, int readsPerTransaction)
        : base(settings.External)
    {
        _connection = connection;
        _clock = settings.Clock;
        _metrics = new TransactionMetrics(settings);

        // Reads run in the caller's transaction: no read transaction of BlockDb's (1 read per transaction prepares nothing).
        Reads = new ReadTransaction(connection, External ? 1 : readsPerTransaction, settings.Batching.ReadTransactionMilliseconds, _clock);
        if (External)
        {
            _stepBegin = connection.Prepare(BlockDbSql.StepSavepoint);
            _stepRelease = connection.Prepare(BlockDbSql.ReleaseStep);
            _stepUndo = connection.Prepare(BlockDbSql.RollbackToStep);
        }
        else
        {
            _begin = connection.Prepare(BlockDbSql.Begin);
            _commit = connection.Prepare(BlockDbSql.Commit);
            _rollback = connection.Prepare(BlockDbSql.Rollback);
        }

        _savepoint = connection.Prepare(BlockDbSql.Savepoint);
        _release = connection.Prepare(BlockDbSql.ReleaseSavepoint);
        _rollbackTo = connection.Prepare(BlockDbSql.RollbackToSavepoint);
        _wal = !External && settings.AppliedPragmas.JournalMode == JournalMode.Wal && !settings.ReadOnly ? new WalWatch(settings.Path) : null;
    }


    /// <summary>The session's read transaction (reads outside a write transaction).</summary>
    public ReadTransaction Reads { get; }

    /// <summary>Counts the transactions begun: what a session checked inside one transaction holds until this moves.</summary>
    public long Transaction { get; private set; }

    /// <summary>Counts changes after which what was read under the write lock may not hold (collections, volume states, savepoint rollbacks); checks are cached per (<see cref="Transaction"/>, <see cref="Revision"/>).</summary>
    public long Revision { get; private set; }

    /// <inheritdoc/>
    public override bool InCallerTransaction => _connection.InTransaction;

    /// <summary>Whether SQLite ended the open transaction on its own (SQLITE_FULL, IOERR, BUSY, NOMEM roll it back: <see href="https://www.sqlite.org/lang_transaction.html"/>). Reads state only [B2].</summary>
    public override bool EndedByEngine => IsOpen && !_connection.InTransaction;

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

    /// <inheritdoc/>
    public override ValueTask CommitAsync()
    {
        Commit();
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public override ValueTask RollbackAsync()
    {
        Rollback();
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public override void AfterFailedCall()
    {
        if (IsOpen && Pending == 0)
        {
            try
            {
                Commit();
            }
            catch (BlockDbException)
            {
                // The call's own failure is what the caller must see; the transaction is ended either way.
            }
        }

        Reads.Abandon();
    }

    /// <summary>Commits the open transaction, if any; else ends the read transaction.</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed: rolled back, or its outcome unknown [B3].</exception>
    /// <exception cref="InvalidOperationException">The transaction is the caller's (<see cref="EngineTransaction.External"/>).</exception>
    public void Commit()
    {
        if (External)
        {
            throw Errors.TransactionIsCallers(nameof(IBlockSession.CommitAsync));
        }

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
            _commit!.ExecuteNonQuery();
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
                    _rollback!.ExecuteNonQuery();
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
                _rollback!.ExecuteNonQuery();
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
    /// <exception cref="InvalidOperationException">The transaction is the caller's (<see cref="EngineTransaction.External"/>).</exception>
    public void Rollback()
    {
        if (External)
        {
            throw Errors.TransactionIsCallers(nameof(IBlockSession.RollbackAsync));
        }

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
                _rollback!.ExecuteNonQuery();
            }
        }
        finally
        {
            End(committed: false);
            _metrics.Rolled("requested", pending, null);
        }
    }

    /// <summary>Closes the books on a transaction SQLite ended on its own (<see cref="EndedByEngine"/>); runs no statement, so an exception filter may call it. Returns the lost batch's report [B2].</summary>
    public override BlockDbBatchRolledBackException EndLost(Exception e)
    {
        var lost = Pending;
        End(committed: false);
        _metrics.Rolled("lost", lost, e);
        return External ? Errors.CallerTransactionLost(e, lost) : Errors.BatchLost(e, lost);
    }

    /// <summary>Begins the write transaction unless it is open [R1]; in External mode, the call's step inside the caller's transaction.</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The open transaction was ended by SQLite after a failure this session did not see [B2], or (External) SQLite ended the caller's transaction during the call [X2].</exception>
    /// <exception cref="InvalidOperationException">External: the caller's transaction is not open [X2].</exception>
    public void Begin()
    {
        if (IsOpen)
        {
            if (!_connection.InTransaction)
            {
                // Ended under us by a failure this transaction did not see: never write outside the write lock.
                var lost = Pending;
                End(committed: false);
                throw External
                    ? Errors.CallerTransactionLost(new BlockDbException("The caller's transaction is no longer active.", SqliteResultCode.Error, SqliteResultCode.Error, null), lost)
                    : Errors.BatchEndedEarlier(lost);
            }

            if (External && !_stepSavepoint)
            {
                // The call was begun for one atomic write (BeginForOneWrite): a second could not be undone with the first.
                throw new InvalidOperationException("A BlockDb call begun for one write wrote again outside a savepoint; nothing of it could be undone as a whole.");
            }

            return;
        }

        if (External)
        {
            BeginStep(savepoint: true);
            return;
        }

        // A write never runs in a read snapshot: it would see stale rows and could fail to upgrade (SQLITE_BUSY_SNAPSHOT).
        Reads.End();
        if (_connection.InTransaction)
        {
            // Left open by a ROLLBACK that failed after a failed COMMIT: no batch of this session is open, so it holds nothing acknowledged.
            _rollback!.ExecuteNonQuery();
        }

        _begin!.ExecuteNonQuery();
        _wal?.Record();
        Transaction++;
        MarkOpened();
    }

    /// <summary>
    /// As <see cref="Begin"/>, for a call whose writes are one atomic unit: one statement, or one <see cref="InSavepoint"/>.
    /// In External mode it opens the call's step without the savepoint <c>"BlockDbStep"</c>: a failed statement is backed
    /// out by SQLite itself (<see href="https://www.sqlite.org/lang_conflict.html"/>: ABORT undoes the statement's changes,
    /// and a single-row write has nothing else to undo), and a savepoint undoes itself, so nothing of the call can stay after
    /// it fails [X1]. A second write in the same call is refused (<see cref="Begin"/>). Outside External mode, <see cref="Begin"/>.
    /// </summary>
    /// <exception cref="BlockDbBatchRolledBackException">As <see cref="Begin"/>.</exception>
    /// <exception cref="InvalidOperationException">External: the caller's transaction is not open [X2].</exception>
    public void BeginForOneWrite()
    {
        if (External && !IsOpen)
        {
            BeginStep(savepoint: false);
            return;
        }

        Begin();
    }

    /// <summary>
    /// Runs <paramref name="body"/> so that all of its writes stay or none: in a savepoint (<see cref="InSavepoint"/>), except
    /// in External mode inside a call's step savepoint, which is that unit already: a failure of <paramref name="body"/>
    /// unwinds through the call, which rolls back to its step [X1]. Only for a body whose failure fails the call (no code
    /// of the call catches it and goes on writing).
    /// </summary>
    /// <exception cref="BlockDbBatchRolledBackException">As <see cref="InSavepoint"/>.</exception>
    public TResult AllOrNothing<TState, TResult>(TState state, Func<TState, TResult> body) =>
        External && IsOpen && _stepSavepoint ? body(state) : InSavepoint(state, body);

    private void End(bool committed)
    {
        if (External)
        {
            // A step's end commits nothing and proves nothing about the caller's commit: no tick, no participant.
            MarkEnded();
            return;
        }

        if (committed)
        {
            // First, so nothing that shows the batch as ended (PendingWrites) is seen before other sessions' snapshots restart [R3].
            _clock.Tick();
        }

        MarkEnded();
        if (committed)
        {
            _participant?.AfterCommit();
        }
        else
        {
            _participant?.AfterRollback();
        }
    }

    /// <summary>External: opens the call's step inside the caller's transaction, with <paramref name="savepoint"/> a savepoint [X1, X2].</summary>
    private void BeginStep(bool savepoint)
    {
        if (!_connection.InTransaction)
        {
            throw Errors.NoCallerTransaction();
        }

        if (savepoint)
        {
            _stepBegin!.ExecuteNonQuery();
        }

        _stepSavepoint = savepoint;
        Transaction++;
        MarkOpened(notify: false);
    }

    /// <summary>External, after a call that succeeded: releases its step, so its writes stay in the caller's transaction (a release of a nested savepoint commits nothing).</summary>
    public override void ReleaseStep()
    {
        if (!IsOpen)
        {
            return;
        }

        if (_stepSavepoint)
        {
            _stepRelease!.ExecuteNonQuery();
        }

        End(committed: true);
    }

    /// <summary>
    /// External, after a call that failed: undoes its step (nothing of the call stays in the caller's transaction) and
    /// releases it. Returns the failure to report: <paramref name="failure"/>, or the undo's own failure when the call's
    /// writes could not be undone (the caller must then roll back).
    /// </summary>
    public override Exception UndoStep(Exception failure)
    {
        if (!IsOpen)
        {
            return failure;
        }

        try
        {
            Revise();
            if (_stepSavepoint && _connection.InTransaction)
            {
                // Without the savepoint, the call's one write undid itself when it failed (BeginForOneWrite).
                _stepUndo!.ExecuteNonQuery();
                _stepRelease!.ExecuteNonQuery();
            }

            return failure;
        }
        catch (BlockDbException undo)
        {
            return Errors.StepUndoFailed(undo, failure);
        }
        catch (ObjectDisposedException)
        {
            // The caller closed its connection: its transaction, and the step in it, went with it.
            return failure;
        }
        finally
        {
            End(committed: false);
        }
    }
}
