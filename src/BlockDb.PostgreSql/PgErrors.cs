using System.Net.Sockets;
using Npgsql;

namespace BlockDb.PostgreSql;

/// <summary>
/// Turns Npgsql's exceptions into <see cref="BlockDbException"/> with the server's SQLSTATE
/// (<see href="https://www.postgresql.org/docs/current/errcodes-appendix.html"/>); the SQLite codes stay null.
/// </summary>
internal static class PgErrors
{
    /// <summary>SQLSTATE class 08: connection exception. Used when the connection broke without a server error (a socket closed).</summary>
    public const string ConnectionFailure = "08006";

    /// <summary>SQLSTATE 23505: unique violation (an insert of a block that exists).</summary>
    public const string UniqueViolation = "23505";

    /// <summary>SQLSTATE 57014: query canceled (<c>statement_timeout</c>, or a cancel request).</summary>
    public const string QueryCanceled = "57014";

    /// <summary>Whether <paramref name="e"/> is a failure <see cref="Map"/> turns into a <see cref="BlockDbException"/>.</summary>
    public static bool IsDatabaseFailure(Exception e) =>
        e is NpgsqlException or SocketException or IOException or TimeoutException;

    /// <summary>The typed exception for an Npgsql failure during <paramref name="operation"/>.</summary>
    public static BlockDbException Map(Exception e, string operation)
    {
        var sqlState = SqlStateOf(e);
        var detail = e is PostgresException pg ? $"{pg.SqlState}: {pg.MessageText}" : e.Message;
        return new BlockDbException($"{operation} failed on the PostgreSQL server: {detail}", sqlState, e);
    }

    /// <summary>The SQLSTATE of a failure: the server's own, else 57014 for a client-side timeout, else 08006 (the connection broke).</summary>
    public static string SqlStateOf(Exception e) => e switch
    {
        PostgresException pg => pg.SqlState,
        NpgsqlException { InnerException: TimeoutException } or TimeoutException => QueryCanceled,
        NpgsqlException { InnerException: PostgresException inner } => inner.SqlState,
        NpgsqlException { SqlState: { } state } => state,
        _ => ConnectionFailure,
    };

    /// <summary>
    /// Whether the failure lost the connection or the server (class 08, admin or crash shutdown 57P01-57P03): the
    /// work of an open transaction is gone, and a call that had nothing pending may run again on a new connection.
    /// </summary>
    public static bool IsConnectionLoss(string sqlState) =>
        sqlState.StartsWith("08", StringComparison.Ordinal) || sqlState is "57P01" or "57P02" or "57P03";
}
