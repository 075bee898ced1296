using System.Data;
using System.Runtime.CompilerServices;
using BlockDb.Diagnostics;
using Npgsql;

namespace BlockDb.PostgreSql.Sessions;

/// <summary>How a session's calls run: the gate, the connection (reopened after a loss), the batch, errors, the age timer.</summary>
internal sealed partial class PostgreSqlSession
{
    /// <summary>A statement on the session's connection, in the open transaction or none.</summary>
    private delegate Task<T> Statement<T>(NpgsqlConnection connection, NpgsqlTransaction? transaction, CancellationToken cancellationToken);

    /// <summary>Every public call: one caller at a time, the token checked first, a failed age commit reported first.</summary>
    private async ValueTask<T> CallAsync<T>(Func<CancellationToken, ValueTask<T>> body, CancellationToken cancellationToken, [CallerMemberName] string name = "")
    {
        var started = Instruments.StartCall(ref _calls);
        Exception? failure = null;
        try
        {
            await _gate.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            try
            {
                _batch.ThrowDeferred();
                return await body(cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                _gate.Exit();
            }
        }
        catch (Exception e)
        {
            failure = e;
            throw;
        }
        finally
        {
            Instruments.EndCall("postgresql", _context.ProviderName, name, started, failure);
        }
    }

    /// <summary>
    /// A write: refused on a read-only database, opens the batch, counts what it wrote (<c>wrote</c> says from its result)
    /// and commits when due. <c>retryable</c>: whether running it again after a lost connection cannot write twice; by
    /// default true only inside a transaction (nothing of it committed before the loss).
    /// </summary>
    private ValueTask<T> WriteAsync<T>(string operation, Statement<T> statement, Func<T, bool> wrote, CancellationToken cancellationToken, bool? retryable = null) =>
        WriteAsync(operation, statement, result => wrote(result) ? 1 : 0, cancellationToken, retryable);

    /// <summary>As the overload above, for a call that makes several writes (<c>writes</c> counts them from its result).</summary>
    private async ValueTask<T> WriteAsync<T>(string operation, Statement<T> statement, Func<T, int> writes, CancellationToken cancellationToken, bool? retryable = null)
    {
        _context.RequireWritable(operation);
        var result = await RunAsync(operation, statement, write: true, retryable ?? _context.Options.Batching.CommitEvery != 1, cancellationToken).ConfigureAwait(false);
        await _batch.EndWriteAsync(writes(result)).ConfigureAwait(false);
        return result;
    }

    /// <summary>Runs one statement; maps failures, ends a batch the failure aborted, and runs once more after a lost connection when that is safe.</summary>
    private async ValueTask<T> RunAsync<T>(string operation, Statement<T> statement, bool write, bool retryable, CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            var connection = await ConnectionAsync(cancellationToken).ConfigureAwait(false);
            var hadWrites = _batch.Pending > 0;
            try
            {
                if (write)
                {
                    await _batch.BeginAsync(connection).ConfigureAwait(false);
                }

                var transaction = _batch.Transaction;
                return await statement(connection, transaction, transaction is null ? cancellationToken : CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
            {
                var error = PgErrors.Map(e, operation);
                var thrown = await _batch.LoseAsync(error).ConfigureAwait(false);
                var lostConnection = PgErrors.IsConnectionLoss(error.SqlState!) || connection.State is ConnectionState.Broken or ConnectionState.Closed;
                if (lostConnection)
                {
                    await DropConnectionAsync().ConfigureAwait(false);
                }

                if (lostConnection && retryable && !hadWrites && attempt == 0)
                {
                    continue;
                }

                throw thrown;
            }
        }
    }

    /// <summary>The session's connection, opened again from the pool when it was lost.</summary>
    private async ValueTask<NpgsqlConnection> ConnectionAsync(CancellationToken cancellationToken)
    {
        if (_connection is { State: ConnectionState.Open } open)
        {
            return open;
        }

        await DropConnectionAsync().ConfigureAwait(false);
        try
        {
            _connection = await _context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
            return _connection;
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, "Reconnecting the session");
        }
    }

    /// <summary>Forgets a lost connection and the pool's idle ones (after a server restart they are all dead).</summary>
    private async ValueTask DropConnectionAsync()
    {
        if (_connection is { } lost)
        {
            _connection = null;
            await lost.DisposeAsync().ConfigureAwait(false);
            _context.DataSource.Clear();
        }
    }

    /// <summary>The age timer: commits an idle old batch from the gate, or looks again shortly when a call is inside.</summary>
    private void FireAgeTimer()
    {
        if (!_gate.TryEnterBackground())
        {
            if (!_gate.IsClosed)
            {
                Schedule(BusyRetryMilliseconds);
            }

            return;
        }

        _ = CommitIfOldAsync();
    }

    /// <summary>Inside the gate: commits the batch when it is old enough, or schedules another look when it is not yet.</summary>
    private async Task CommitIfOldAsync()
    {
        var limit = _context.Options.Batching.CommitAfterMilliseconds ?? 0;
        var remaining = _batch.Transaction is null ? 0 : limit - _batch.AgeMilliseconds;
        try
        {
            if (_batch.Transaction is not null && remaining <= 0)
            {
                await _batch.CommitAsync().ConfigureAwait(false);
            }
        }
        catch (BlockDbBatchRolledBackException e)
        {
            _batch.Defer(e); // a timer must not throw: the session's next call (or its dispose) reports it
        }
        finally
        {
            _gate.Exit();
        }

        if (remaining > 0)
        {
            Schedule(remaining);
        }
    }

    private void Schedule(long milliseconds)
    {
        try
        {
            _ageTimer?.Change(Math.Max(1, milliseconds), Timeout.Infinite);
        }
        catch (ObjectDisposedException) when (_gate.IsClosed)
        {
            // The session was disposed meanwhile: its dispose ends the batch, no timer is needed.
        }
    }
}
