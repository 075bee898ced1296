using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb;

/// <summary>Runs work inside one transaction on a connection outside a session (the schema check, the check and repair).</summary>
internal static class Transactions
{
    /// <summary>Runs <paramref name="body"/> between <paramref name="begin"/> and <c>COMMIT</c>, rolling back on any failure.</summary>
    public static T Run<T>(ISqliteConnection connection, string begin, Func<T> body)
    {
        connection.Execute(begin);
        try
        {
            var result = body();
            connection.Execute(BlockDbSql.Commit.Text);
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
