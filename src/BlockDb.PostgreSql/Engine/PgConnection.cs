using System.Data;
using Npgsql;

namespace BlockDb.PostgreSql.Engine;

/// <summary>
/// A session's connection: one pooled connection for the session's lifetime, opened again after it is lost, and how one
/// statement runs on it (in the open transaction, or none), with failures mapped, the transaction aborted by a server
/// error ended [P2], and one more run on a new connection after a lost one when that cannot write twice. With
/// <paramref name="perCall"/> (the shared session's pooled sessions, which autocommit) it holds a connection only
/// during a call, and a write's token is honoured only until its statement is sent [P3].
/// </summary>
/// <param name="context">The database's pool and options.</param>
/// <param name="connection">The session's first connection, or null to open one at the first call.</param>
/// <param name="transaction">The session's write transaction.</param>
/// <param name="perCall">Whether the connection goes back to the pool after each call that leaves no transaction open.</param>
internal sealed class PgConnection(PgContext context, NpgsqlConnection? connection, PgTransaction transaction, bool perCall = false)
{
    private NpgsqlConnection? _connection = connection;

    /// <summary>
    /// Whether the last <see cref="RunAsync"/> ran its write again after a lost connection, the first run having been sent
    /// outside a transaction: it may have committed, so a select-xor-insert reports the blocks it found as created.
    /// </summary>
    public bool RepeatedAutocommitWrite { get; private set; }

    /// <summary>A statement on the session's connection, in the open transaction or none.</summary>
    public delegate Task<T> Statement<T>(NpgsqlConnection connection, NpgsqlTransaction? transaction, CancellationToken cancellationToken);

    /// <summary>
    /// Runs one statement; a write opens the transaction first. The token cancels a statement outside a transaction
    /// only: a cancelled statement inside one would abort it, losing the batch, so it runs to its end (bounded by the
    /// server's <c>statement_timeout</c>). After a lost connection (the server restarted, the backend was terminated) it
    /// runs once more on a new connection when <paramref name="retryable"/> and nothing was pending. A write outside a
    /// transaction (autocommit: per call, or a session with <c>CommitEvery</c> 1) [P3] honours its token until its
    /// statement is sent (the wait for a connection) and nothing after, nor in its repeat: a write that throws
    /// <see cref="OperationCanceledException"/> sent nothing, and one that was sent returns its committed result (Npgsql's
    /// cancellation could otherwise end the call while the server still commits it); its repeat is not cancellable.
    /// </summary>
    /// <param name="operation">The call's name, for messages.</param>
    /// <param name="statement">The work.</param>
    /// <param name="write">Whether it writes (opens the transaction).</param>
    /// <param name="retryable">Whether running it again after a lost connection cannot write twice (reads, select-xor-insert, a write inside a transaction that never committed).</param>
    /// <param name="cancellationToken">The call's token.</param>
    /// <exception cref="BlockDbException">The server failed; the SQLSTATE is kept.</exception>
    /// <exception cref="OperationCanceledException">Cancelled; per call, a write's statement was not sent.</exception>
    public async ValueTask<T> RunAsync<T>(string operation, Statement<T> statement, bool write, bool retryable, CancellationToken cancellationToken)
    {
        var sentAutocommit = false;
        for (var attempt = 0; ; attempt++)
        {
            RepeatedAutocommitWrite = sentAutocommit;
            var token = write && attempt > 0 ? CancellationToken.None : cancellationToken;
            var connection = await OpenAsync(operation, token).ConfigureAwait(false);
            var hadWrites = transaction.Pending > 0;
            try
            {
                if (write)
                {
                    await transaction.BeginAsync(connection).ConfigureAwait(false);
                }

                if (write && transaction.Current is null)
                {
                    // An autocommit write commits as it runs: honoured until sent, never after [P3].
                    token.ThrowIfCancellationRequested();
                    token = CancellationToken.None;
                    sentAutocommit = true;
                }

                var current = transaction.Current;
                return await statement(connection, current, current is null ? token : CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
            {
                var error = PgErrors.Map(e, operation);
                await transaction.AbortAsync().ConfigureAwait(false);
                var lost = PgErrors.IsConnectionLoss(error.SqlState!) || connection.State is ConnectionState.Broken or ConnectionState.Closed;
                if (lost)
                {
                    await DropAsync().ConfigureAwait(false);
                }

                if (lost && retryable && !hadWrites && attempt == 0)
                {
                    continue;
                }

                throw error;
            }
            finally
            {
                if (perCall && transaction.Current is null)
                {
                    await CloseAsync().ConfigureAwait(false);
                }
            }
        }
    }

    /// <summary>Gives the connection back to the pool.</summary>
    public async ValueTask CloseAsync()
    {
        if (_connection is { } open)
        {
            _connection = null;
            await open.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>The session's connection, opened again from the pool when it was lost (per call: taken from the pool for this call).</summary>
    private async ValueTask<NpgsqlConnection> OpenAsync(string operation, CancellationToken cancellationToken)
    {
        if (_connection is { State: ConnectionState.Open } open)
        {
            return open;
        }

        await DropAsync().ConfigureAwait(false);
        try
        {
            _connection = await context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
            return _connection;
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, perCall ? operation : "Reconnecting the session");
        }
    }

    /// <summary>Forgets a lost connection and the pool's idle ones (after a server restart they are all dead).</summary>
    private async ValueTask DropAsync()
    {
        if (_connection is { } lost)
        {
            _connection = null;
            await lost.DisposeAsync().ConfigureAwait(false);
            context.DataSource.Clear();
        }
    }
}
