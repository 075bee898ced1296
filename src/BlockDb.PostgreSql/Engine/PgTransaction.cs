using BlockDb.Engine;
using Npgsql;

namespace BlockDb.PostgreSql.Engine;

/// <summary>
/// A PostgreSQL session's write transaction, the mechanics only (when to commit is <see cref="CommitPolicy"/>'s, as on
/// SQLite). With <see cref="BatchingOptions.CommitEvery"/> = 1 there is none: every write commits on its own
/// (autocommit). Otherwise the first write opens one (Npgsql sends <c>BEGIN</c> with that write, no extra round trip).
/// </summary>
/// <remarks>
/// Any server error inside the transaction aborts it on the server [P2]
/// (<see href="https://www.postgresql.org/docs/current/tutorial-transactions.html"/>): the session's connection rolls it
/// back at once (<see cref="AbortAsync"/>) and, when it held writes, keeps the books open for the failed call's policy,
/// which reports the lost batch with its writes (<see cref="EndedByEngine"/>, <see cref="EndLost"/>) [B2]. A
/// <c>COMMIT</c> that got no answer, or a connection failure, has an unknown outcome [B3].
/// </remarks>
internal sealed class PgTransaction(BatchingOptions options) : EngineTransaction(external: false)
{
    private bool _aborted;

    /// <summary>Whether every write commits on its own (<see cref="BatchingOptions.CommitEvery"/> = 1): then a write that failed on a lost connection may have committed.</summary>
    public bool Autocommit => options.CommitEvery == 1;

    /// <summary>The open transaction, or null (none, or autocommit).</summary>
    public NpgsqlTransaction? Current { get; private set; }

    /// <summary>Opens a transaction for a write unless one is open or writes autocommit.</summary>
    public async ValueTask BeginAsync(NpgsqlConnection connection)
    {
        if (Current is null && !Autocommit)
        {
            // Not cancellable: Npgsql only queues BEGIN for the next command.
            Current = await connection.BeginTransactionAsync(CancellationToken.None).ConfigureAwait(false);
            MarkOpened();
        }
    }

    /// <summary>Counts the writes one call made in the open transaction; nothing in autocommit.</summary>
    public void Wrote(bool wrote) => Wrote(wrote ? 1 : 0);

    /// <inheritdoc cref="Wrote(bool)"/>
    public void Wrote(int writes)
    {
        if (IsOpen)
        {
            CountWrites(writes);
        }
    }

    public override bool EndedByEngine => IsOpen && _aborted;

    /// <summary>Commits the open transaction, if any; one that holds no write is rolled back instead (nothing to keep).</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed; the batch is gone, or its outcome unknown [B3].</exception>
    public override async ValueTask CommitAsync()
    {
        if (Current is not { } transaction)
        {
            return;
        }

        var writes = Pending;
        if (writes == 0)
        {
            await RollbackAsync().ConfigureAwait(false);
            return;
        }

        try
        {
            // Not cancellable: a commit cancelled half-way would leave the caller unsure what is durable.
            await transaction.CommitAsync(CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            await RollbackAsync().ConfigureAwait(false);
            var cause = PgErrors.Map(e, "COMMIT");

            // The server answered with an error (a SQLSTATE outside class 08): the transaction was rolled back. No
            // answer, or a connection failure, while COMMIT was in flight: the server may have committed it.
            var unknown = cause.SqlState is null || cause.SqlState.StartsWith("08", StringComparison.Ordinal);
            throw unknown
                ? new BlockDbBatchRolledBackException($"The COMMIT of {writes} write(s) got no answer from the server, which may have committed them: whether they are in the database is unknown; repeat them (select-xor-insert returns the ID of a block that did commit). Everything committed before is intact. {cause.Message}", writes, cause, commitOutcomeUnknown: true)
                : RolledBack(writes, cause);
        }

        Current = null;
        MarkEnded();
        await transaction.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>Rolls the open transaction back, if any; a connection that broke meanwhile has rolled it back already.</summary>
    public override async ValueTask RollbackAsync()
    {
        _aborted = false;
        MarkEnded();
        await EndQuietlyAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// After a server error inside the transaction (which the server aborted [P2]): rolls it back on the connection;
    /// with writes in it, keeps the books open so the failed call reports them lost [B2], else ends them.
    /// </summary>
    public async ValueTask AbortAsync()
    {
        if (Current is null)
        {
            return;
        }

        if (Pending > 0)
        {
            _aborted = true;
        }
        else
        {
            MarkEnded();
        }

        await EndQuietlyAsync().ConfigureAwait(false);
    }

    /// <summary>Before a write call fails with a refusal after its round trip: a transaction that holds no write is not kept open [B1].</summary>
    public ValueTask EndIfEmptyAsync() => IsOpen && Pending == 0 ? RollbackAsync() : ValueTask.CompletedTask;

    public override BlockDbBatchRolledBackException EndLost(Exception e)
    {
        var lost = Pending;
        _aborted = false;
        MarkEnded();
        return RolledBack(lost, e as BlockDbException ?? new BlockDbException($"{e.GetType().Name}: {e.Message}", e));
    }

    /// <summary>Nothing: the connection ended an aborted transaction (<see cref="AbortAsync"/>) and the session ended an empty one before refusing (<see cref="EndIfEmptyAsync"/>).</summary>
    public override void AfterFailedCall()
    {
    }

    private async ValueTask EndQuietlyAsync()
    {
        if (Current is not { } transaction)
        {
            return;
        }

        Current = null;
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

    private static BlockDbBatchRolledBackException RolledBack(int lost, BlockDbException cause) =>
        new($"The open batch was rolled back ({lost} write(s) lost; everything committed before is intact): {cause.Message}", lost, cause);
}
