using Npgsql;

namespace BlockDb.PostgreSql.Sessions;

/// <summary>One statement on a connection of its own from the pool, in autocommit, with errors mapped and one more run after a lost connection.</summary>
internal static class PgRetry
{
    /// <summary>Runs <paramref name="statement"/> on a pooled connection.</summary>
    /// <param name="dataSource">The pool.</param>
    /// <param name="operation">The call's name, for messages.</param>
    /// <param name="statement">The work; its connection goes back to the pool afterwards.</param>
    /// <param name="retryable">Whether running it again cannot write twice (reads, select-xor-insert).</param>
    /// <param name="cancellationToken">Cancels the statement on the server.</param>
    /// <exception cref="BlockDbException">The server failed; the SQLSTATE is kept.</exception>
    public static async Task<T> RunAsync<T>(NpgsqlDataSource dataSource, string operation, Func<NpgsqlConnection, CancellationToken, Task<T>> statement, bool retryable, CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                var connection = await dataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
                await using var connectionScope = connection.ConfigureAwait(false);
                return await statement(connection, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
            {
                var error = PgErrors.Map(e, operation);
                if (!PgErrors.IsConnectionLoss(error.SqlState!))
                {
                    throw error;
                }

                dataSource.Clear(); // after a restart every idle connection of the pool is dead
                if (!retryable || attempt > 0)
                {
                    throw error;
                }
            }
        }
    }
}
