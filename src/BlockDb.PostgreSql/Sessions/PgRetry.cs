using Npgsql;

namespace BlockDb.PostgreSql.Sessions;

/// <summary>One statement on a connection of its own from the pool, in autocommit, with errors mapped and one more run after a lost connection.</summary>
internal static class PgRetry
{
    /// <summary>Runs <paramref name="statement"/> on a pooled connection.</summary>
    /// <param name="dataSource">The pool.</param>
    /// <param name="operation">The call's name, for messages.</param>
    /// <param name="statement">The work; its connection goes back to the pool afterwards.</param>
    /// <param name="access">Whether it writes, and whether running it again cannot write twice.</param>
    /// <param name="cancellationToken">Cancels the wait for a connection, and a read's statement on the server.</param>
    /// <exception cref="BlockDbException">The server failed; the SQLSTATE is kept.</exception>
    /// <exception cref="OperationCanceledException">Cancelled; a write's statements were not sent.</exception>
    public static async Task<T> RunAsync<T>(NpgsqlDataSource dataSource, string operation, Func<NpgsqlConnection, CancellationToken, Task<T>> statement, PgAccess access, CancellationToken cancellationToken)
    {
        var writes = access != PgAccess.Read;
        for (var attempt = 0; ; attempt++)
        {
            // A write that was sent once completes whatever the token says, its repeat after a lost connection included.
            var token = writes && attempt > 0 ? CancellationToken.None : cancellationToken;
            try
            {
                var connection = await dataSource.OpenConnectionAsync(token).ConfigureAwait(false);
                await using var connectionScope = connection.ConfigureAwait(false);
                if (writes)
                {
                    token.ThrowIfCancellationRequested();
                    token = CancellationToken.None;
                }

                return await statement(connection, token).ConfigureAwait(false);
            }
            catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
            {
                var error = PgErrors.Map(e, operation);
                if (!PgErrors.IsConnectionLoss(error.SqlState!))
                {
                    throw error;
                }

                dataSource.Clear(); // after a restart every idle connection of the pool is dead
                if (access == PgAccess.Write || attempt > 0)
                {
                    throw error;
                }
            }
        }
    }
}
