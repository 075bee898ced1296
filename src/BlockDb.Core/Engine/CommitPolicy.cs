using System.Runtime.CompilerServices;

namespace BlockDb.Engine;

/// <summary>
/// When a session commits, decisions only (the mechanics are the transaction's): after a write call, at
/// <see cref="BatchingOptions.CommitEvery"/> pending writes, at <see cref="BatchingOptions.CommitAfterMilliseconds"/>, or
/// at once when the transaction holds no write [B1]; never inside a call, so a span call is one transaction. It also
/// keeps a failed age commit for the next call or dispose [B4], and turns a failure after which the engine ended the
/// transaction on its own into the report of the lost batch [B2]. Owned by one session, used inside its gate.
/// </summary>
/// <remarks>
/// The mechanics are the engine's <see cref="EngineTransaction"/>; a commit may complete asynchronously (PostgreSQL), so
/// the decisions that commit return a <see cref="ValueTask"/>, completed at once when nothing is committed or the engine
/// commits synchronously (SQLite).
/// <para>
/// On a caller's connection (<see cref="EngineTransaction.External"/>) it never commits: there is no batch and no age
/// timer; each call needs the caller's transaction open at entry [X2]; a write call's step is released after it
/// succeeds and undone after it fails, before the call returns [X1]; dispose ends nothing. The caller commits.
/// </para>
/// </remarks>
internal sealed class CommitPolicy(BatchingOptions options, EngineTransaction transaction)
{
    private Exception? _deferred;

    /// <summary>Writes in the open transaction, not yet committed.</summary>
    public int Pending => transaction.Pending;

    /// <summary>At the start of a call, inside the gate: keeps the call's token for long work, and throws a failed age commit, once [B4].</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void CallStarted(CancellationToken cancellationToken)
    {
        transaction.CallCancellation = cancellationToken;
        if (transaction.External)
        {
            RequireCallerTransaction();
        }

        if (_deferred is { } failure)
        {
            _deferred = null;
            throw failure;
        }
    }

    /// <summary>At the end of a call, inside the gate; on a caller's connection a step still open (a write call that returned without <see cref="AfterWriteAsync"/>) is undone, so no savepoint outlives a call [X1].</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void CallEnded()
    {
        transaction.CallCancellation = default;
        if (transaction.External && transaction.IsOpen)
        {
            _ = transaction.UndoStep(new InvalidOperationException("A BlockDb call ended with its step open."));
        }
    }

    /// <exception cref="InvalidOperationException">The caller's transaction is not open [X2].</exception>
    private void RequireCallerTransaction()
    {
        if (!transaction.InCallerTransaction)
        {
            throw Errors.NoCallerTransaction();
        }
    }

    /// <summary>After a write call returned: commits when the transaction holds no write [B1], is full, or is old.</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed [B3].</exception>
    public ValueTask AfterWriteAsync()
    {
        if (transaction.External)
        {
            transaction.ReleaseStep();
            return ValueTask.CompletedTask;
        }

        if (!transaction.IsOpen)
        {
            return ValueTask.CompletedTask;
        }

        var pending = transaction.Pending;
        if (pending == 0
            || (options.CommitEvery > 0 && pending >= options.CommitEvery)
            || (options.CommitAfterMilliseconds is { } ms && transaction.AgeMilliseconds >= ms))
        {
            return transaction.CommitAsync();
        }

        return ValueTask.CompletedTask;
    }

    /// <summary>
    /// In the failed call's exception filter, before anything unwinds: when the engine rolled the transaction back on its
    /// own, closes its books and returns the lost batch's report to throw instead [B2]. Runs no statement.
    /// </summary>
    public Exception Failing(Exception e) => transaction.EndedByEngine ? transaction.EndLost(e) : e;

    /// <summary>
    /// After a failed call has unwound: a transaction that holds no write is ended, so the write lock is not kept idle
    /// [B1]; the read transaction is abandoned, so the next read starts afresh [R2]. On a caller's connection, the call's
    /// step is undone instead [X1]. Throws nothing; returns the failure to report (<paramref name="failure"/>, or the
    /// undo's failure when the call's writes could not be taken out of the caller's transaction).
    /// </summary>
    public Exception AfterFailedCall(Exception failure)
    {
        if (transaction.External)
        {
            return transaction.UndoStep(failure);
        }

        transaction.AfterFailedCall();
        return failure;
    }

    /// <summary>For the idle timer, outside any call: commits an old transaction [B4 keeps its failure]; returns the milliseconds until the open one is old, or null when none is open or there is no age limit.</summary>
    public async ValueTask<long?> CommitIfOldAsync()
    {
        if (transaction.External || !transaction.IsOpen || options.CommitAfterMilliseconds is not { } ms)
        {
            return null;
        }

        var left = ms - transaction.AgeMilliseconds;
        if (left > 0)
        {
            return left;
        }

        await transaction.CommitAsync().ConfigureAwait(false);
        return null;
    }

    /// <summary>Keeps a failure of background work (an age commit) to be thrown by the next call or by dispose [B4].</summary>
    public void Defer(Exception failure) => _deferred ??= failure;

    /// <summary>Throws the kept background failure, once [B4].</summary>
    public void ThrowDeferred()
    {
        if (_deferred is { } failure)
        {
            _deferred = null;
            throw failure;
        }
    }

    /// <summary>At dispose: ends the open transaction as <see cref="BatchingOptions.OnDispose"/> says; on a caller's connection, nothing.</summary>
    public ValueTask EndAtDisposeAsync() =>
        transaction.External ? ValueTask.CompletedTask // nothing is BlockDb's to end: every step ended with its call, and the transaction is the caller's
        : options.OnDispose == DisposeBehavior.Commit ? transaction.CommitAsync()
        : transaction.RollbackAsync();
}
