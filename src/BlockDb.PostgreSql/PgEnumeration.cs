using System.Collections.Concurrent;
using System.Data;
using System.Runtime.CompilerServices;
using Npgsql;

namespace BlockDb.PostgreSql;

/// <summary>
/// The enumerations of a server's index: one query streamed from one REPEATABLE READ, READ ONLY transaction (one
/// snapshot, beside running writers: <see href="https://www.postgresql.org/docs/current/transaction-iso.html#XACT-REPEATABLE-READ"/>)
/// on a pooled connection of its own, given back when the enumeration ends or is disposed.
/// </summary>
/// <remarks>
/// Invariant: every connection an enumeration holds is in the database's <c>open</c> set until the enumeration ends;
/// the database's dispose cancels <c>closing</c> and closes those connections, so an enumeration waiting between rows
/// ends at its next row with <see cref="ObjectDisposedException"/> and none keeps a connection after the dispose.
/// </remarks>
internal static class PgEnumeration
{
    /// <summary>Streams the rows of <paramref name="sql"/>.</summary>
    public static async IAsyncEnumerable<T> StreamAsync<T>(
        PgContext context,
        ConcurrentDictionary<NpgsqlConnection, byte> open,
        CancellationToken closing,
        string sql,
        Action<NpgsqlCommand>? bind,
        Func<NpgsqlDataReader, T> read,
        [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        ThrowIfClosing(closing);
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, closing);
        var token = linked.Token;
        var connection = await context.DataSource.OpenConnectionAsync(token).ConfigureAwait(false);
        open[connection] = 0;
        NpgsqlTransaction? transaction = null;
        NpgsqlDataReader? reader = null;
        try
        {
            ThrowIfClosing(closing);
            transaction = await connection.BeginTransactionAsync(IsolationLevel.RepeatableRead, token).ConfigureAwait(false);
            using (var readOnly = new NpgsqlCommand("SET TRANSACTION READ ONLY", connection, transaction))
            {
                await readOnly.ExecuteNonQueryAsync(token).ConfigureAwait(false);
            }

            using var command = new NpgsqlCommand(sql, connection, transaction);
            bind?.Invoke(command);
            reader = await command.ExecuteReaderAsync(token).ConfigureAwait(false);
            while (true)
            {
                ThrowIfClosing(closing);
                cancellationToken.ThrowIfCancellationRequested();
                if (!await reader.ReadAsync(token).ConfigureAwait(false))
                {
                    yield break;
                }

                yield return read(reader);
            }
        }
        finally
        {
            open.TryRemove(connection, out _);
            await QuietlyAsync(reader).ConfigureAwait(false);
            await QuietlyAsync(transaction).ConfigureAwait(false);
            await QuietlyAsync(connection).ConfigureAwait(false);
        }
    }

    /// <summary>Disposes what an enumeration holds (a connection goes back to the pool); what the database's dispose closed already is ignored.</summary>
    public static async ValueTask QuietlyAsync(IAsyncDisposable? held)
    {
        if (held is null)
        {
            return;
        }

        try
        {
            await held.DisposeAsync().ConfigureAwait(false);
        }
        catch (Exception e) when (e is NpgsqlException or InvalidOperationException or ObjectDisposedException)
        {
            // Closed under the enumeration by the database's dispose: nothing is left to give back.
        }
    }

    private static void ThrowIfClosing(CancellationToken closing)
    {
        if (closing.IsCancellationRequested)
        {
            throw new ObjectDisposedException(nameof(IBlockDatabase), "The BlockDb database was disposed; the enumeration ended.");
        }
    }
}
