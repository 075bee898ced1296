using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Sqlite;

/// <summary>Runs work inside one transaction on a connection outside a session (the schema check, the check and repair).</summary>
internal static class Transactions
{
    /// <summary>Runs <paramref name="body"/> between <paramref name="begin"/> and <c>COMMIT</c>, rolling back on any failure.</summary>
    /// <param name="connection">The connection, outside a transaction.</param>
    /// <param name="begin">The <c>BEGIN</c> statement.</param>
    /// <param name="body">The work.</param>
    /// <param name="retry">False: the <c>BEGIN</c> and the <c>COMMIT</c> wait for a lock no longer than the connection's busy_timeout (<see cref="ISqliteConnection.ExecuteWithoutRetry"/>), whatever the provider retries on its own.</param>
    public static T Run<T>(ISqliteConnection connection, string begin, Func<T> body, bool retry = true)
    {
        Action<string> execute = retry ? connection.Execute : connection.ExecuteWithoutRetry;
        execute(begin);
        try
        {
            var result = body();
            execute(BlockDbSql.Commit.Text);
            return result;
        }
        catch
        {
            if (connection.InTransaction)
            {
                connection.Execute(BlockDbSql.Rollback.Text);
            }

            throw;
        }
    }
}
