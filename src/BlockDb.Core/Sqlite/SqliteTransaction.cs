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
}
