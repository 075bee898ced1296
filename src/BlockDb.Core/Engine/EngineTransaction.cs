using System.Diagnostics;

namespace BlockDb.Engine;

/// <summary>
/// A session's write transaction as <see cref="CommitPolicy"/> sees it, whatever the engine: whether it is open, its
/// pending writes and age (plain fields, read on every call without a virtual call), and the mechanics the policy asks
/// for (commit, rollback, closing the books on a transaction the engine ended on its own [B2]). SQLite's is
/// <see cref="Sqlite.SqliteTransaction"/>; PostgreSQL's is <c>PgTransaction</c>. Owned by one session, used inside its
/// gate [G1] or by its idle timer as background work.
/// </summary>
internal abstract class EngineTransaction
{
    private long _started;

    /// <param name="external">Whether the transaction is the caller's (SQLite's caller-owned connection).</param>
    protected EngineTransaction(bool external) => External = external;

    /// <summary>Whether the connection and its transaction are the caller's: BlockDb never begins, commits or rolls back [X1].</summary>
    public bool External { get; }

    /// <summary>Whether this session's write transaction is open.</summary>
    public bool IsOpen { get; protected set; }

    /// <summary>Writes in the open transaction, not yet committed.</summary>
    public int Pending { get; protected set; }

    /// <summary>The token of the call inside the session's gate (<see langword="default"/> between calls), for work too long to be left uncancellable.</summary>
    public CancellationToken CallCancellation { get; set; }

    /// <summary>Milliseconds since the open transaction began (0 when none is open).</summary>
    public long AgeMilliseconds => IsOpen ? (long)Stopwatch.GetElapsedTime(_started).TotalMilliseconds : 0;

    /// <summary>Called after a transaction opens (the idle timer arms itself).</summary>
    public Action? Opened { get; set; }

    /// <summary>Counts one write of the call in the open transaction (the policy commits between calls).</summary>
    public void Wrote() => Pending++;

    /// <summary>Counts <paramref name="writes"/> writes of the call in the open transaction.</summary>
    public void CountWrites(int writes) => Pending += writes;

    /// <summary>Whether the engine ended the open transaction on its own during the failed call [B2]. Reads state only (an exception filter asks it).</summary>
    public abstract bool EndedByEngine { get; }

    /// <summary>Commits the open transaction, if any (else ends what the engine holds for reads).</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed: rolled back, or its outcome unknown [B3].</exception>
    public abstract ValueTask CommitAsync();

    /// <summary>Rolls the open transaction back, if any.</summary>
    public abstract ValueTask RollbackAsync();

    /// <summary>Closes the books on a transaction the engine ended on its own (<see cref="EndedByEngine"/>) and returns the lost batch's report [B2]. Runs no statement.</summary>
    public abstract BlockDbBatchRolledBackException EndLost(Exception e);

    /// <summary>After a failed call has unwound (outside External): a transaction that holds no write is not kept open [B1]; the engine drops what it holds for reads. Throws nothing.</summary>
    public abstract void AfterFailedCall();

    /// <summary>Whether a transaction is open on the connection (External: the caller's).</summary>
    public virtual bool InCallerTransaction => false;

    /// <summary>External, after a call that succeeded: releases its step.</summary>
    public virtual void ReleaseStep()
    {
    }

    /// <summary>External, after a call that failed: undoes its step; returns the failure to report.</summary>
    public virtual Exception UndoStep(Exception failure) => failure;

    /// <summary>Marks the transaction open now (its age counts from here) and, with <paramref name="notify"/>, tells <see cref="Opened"/>.</summary>
    protected void MarkOpened(bool notify = true)
    {
        IsOpen = true;
        _started = Stopwatch.GetTimestamp();
        if (notify)
        {
            Opened?.Invoke();
        }
    }

    /// <summary>Marks the transaction ended: nothing open, nothing pending.</summary>
    protected void MarkEnded()
    {
        IsOpen = false;
        Pending = 0;
    }
}
