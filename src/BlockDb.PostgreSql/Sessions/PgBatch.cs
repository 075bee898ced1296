using System.Diagnostics;
using Npgsql;

namespace BlockDb.PostgreSql.Sessions;

/// <summary>
/// A session's commit batch on its connection: the open transaction, its pending writes and its age, with the same
/// meaning as the SQLite engine's (<see cref="BatchingOptions"/>). With <see cref="BatchingOptions.CommitEvery"/> = 1
/// there is no explicit transaction: every write commits on its own (autocommit). Otherwise the first write opens a
/// transaction (Npgsql sends <c>BEGIN</c> with that write, no extra round trip) and it commits every
/// <c>CommitEvery</c> writes, once <c>CommitAfterMilliseconds</c> old, or on request.
/// </summary>
/// <remarks>
/// Invariants: a transaction that holds no write is never left open after a call (<see cref="EndWriteAsync(int)"/> rolls it
/// back); a failure that aborts the transaction (any server error inside it: PostgreSQL aborts the whole transaction,
/// <see href="https://www.postgresql.org/docs/current/tutorial-transactions.html"/>) becomes
/// <see cref="BlockDbBatchRolledBackException"/> with the writes lost, and the next write opens a new batch.
/// </remarks>
internal sealed class PgBatch(BatchingOptions options)
{
    private long _openedAt;
    private BlockDbBatchRolledBackException? _deferred;

    /// <summary>The open transaction, or null (no batch, or autocommit).</summary>
    public NpgsqlTransaction? Transaction { get; private set; }

    /// <summary>Writes in the open transaction.</summary>
    public int Pending { get; private set; }

    /// <summary>Called when a transaction opens (arms the age timer).</summary>
    public Action? Opened { get; set; }

    /// <summary>Milliseconds since the open transaction began.</summary>
    public long AgeMilliseconds => (long)Stopwatch.GetElapsedTime(_openedAt).TotalMilliseconds;

    /// <summary>Opens a transaction for a write unless one is open or writes autocommit.</summary>
    public async ValueTask BeginAsync(NpgsqlConnection connection)
    {
        if (Transaction is null && options.CommitEvery != 1)
        {
            // Not cancellable: Npgsql only queues BEGIN for the next command.
            Transaction = await connection.BeginTransactionAsync(CancellationToken.None).ConfigureAwait(false);
            _openedAt = Stopwatch.GetTimestamp();
            Opened?.Invoke();
        }
    }

    /// <summary>Counts a write that wrote, ends a transaction that holds none, and commits when the batch is full or old.</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed.</exception>
    public ValueTask EndWriteAsync(bool wrote) => EndWriteAsync(wrote ? 1 : 0);

    /// <summary>
    /// Counts the <paramref name="writes"/> one call made (a call over many blocks makes one per new block), ends a
    /// transaction that holds none, and commits when the batch is full or old. A call that passes <c>CommitEvery</c>
    /// commits once, at its end: its statements are already on the server.
    /// </summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed.</exception>
    public async ValueTask EndWriteAsync(int writes)
    {
        if (Transaction is null)
        {
            return;
        }

        Pending += writes;

        if (Pending == 0)
        {
            await DiscardAsync().ConfigureAwait(false);
        }
        else if ((options.CommitEvery > 0 && Pending >= options.CommitEvery)
            || (options.CommitAfterMilliseconds is { } age && AgeMilliseconds >= age))
        {
            await CommitAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Commits the open transaction, if any.</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed; the batch is gone.</exception>
    public async ValueTask CommitAsync()
    {
        if (Transaction is not { } transaction)
        {
            return;
        }

        var lost = Pending;
        try
        {
            // Not cancellable: a commit cancelled half-way would leave the caller unsure what is durable.
            await transaction.CommitAsync(CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            await DiscardAsync().ConfigureAwait(false);
            var cause = PgErrors.Map(e, "COMMIT");

            // The server answered with an error (a SQLSTATE outside class 08): the transaction was rolled back. No
            // answer, or a connection failure, while COMMIT was in flight: the server may have committed it.
            var unknown = cause.SqlState is null || cause.SqlState.StartsWith("08", StringComparison.Ordinal);
            throw unknown
                ? new BlockDbBatchRolledBackException($"The COMMIT of {lost} write(s) got no answer from the server, which may have committed them: whether they are in the database is unknown; repeat them (select-xor-insert returns the ID of a block that did commit). Everything committed before is intact. {cause.Message}", lost, cause, commitOutcomeUnknown: true)
                : RolledBack(lost, cause);
        }

        await transaction.DisposeAsync().ConfigureAwait(false);
        (Transaction, Pending) = (null, 0);
    }

    /// <summary>Rolls the open transaction back, if any; a connection that broke meanwhile has rolled it back already.</summary>
    public async ValueTask DiscardAsync()
    {
        if (Transaction is not { } transaction)
        {
            return;
        }

        (Transaction, Pending) = (null, 0);
        try
        {
            await transaction.RollbackAsync(CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e) || e is InvalidOperationException)
        {
            // The server ends an aborted or orphaned transaction itself (a broken connection is closed by the pool).
        }
        finally
        {
            await transaction.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Ends the batch after <paramref name="cause"/> failed inside it: the transaction is aborted, so its writes are
    /// lost. Returns what the caller throws: <see cref="BlockDbBatchRolledBackException"/> when writes were lost, else the cause.
    /// </summary>
    public async ValueTask<BlockDbException> LoseAsync(BlockDbException cause)
    {
        var lost = Pending;
        await DiscardAsync().ConfigureAwait(false);
        return lost > 0 ? RolledBack(lost, cause) : cause;
    }

    /// <summary>Keeps a failure of background work (the age commit) for the session's next call.</summary>
    public void Defer(BlockDbBatchRolledBackException failure) => _deferred ??= failure;

    /// <summary>Throws a failure kept by <see cref="Defer"/>, once.</summary>
    public void ThrowDeferred()
    {
        if (_deferred is { } deferred)
        {
            _deferred = null;
            throw deferred;
        }
    }

    private static BlockDbBatchRolledBackException RolledBack(int lost, BlockDbException cause) =>
        new($"The open batch was rolled back ({lost} write(s) lost; everything committed before is intact): {cause.Message}", lost, cause);
}
