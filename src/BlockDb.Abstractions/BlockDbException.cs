using System.Data.Common;

namespace BlockDb;

/// <summary>
/// The one exception type BlockDb raises for database failures, whatever the provider. SQLite's result codes are kept
/// in <see cref="SqliteErrorCode"/> and <see cref="SqliteExtendedErrorCode"/> (<see href="https://www.sqlite.org/rescode.html"/>),
/// a server's SQLSTATE in <see cref="SqlState"/> (<see href="https://www.postgresql.org/docs/current/errcodes-appendix.html"/>).
/// A refusal before the engine is reached carries the code the engine would have given (a write on a read-only
/// database: <c>SQLITE_READONLY</c>); a failure with no engine counterpart has none.
/// </summary>
public class BlockDbException : DbException
{
    /// <summary>Creates an exception that did not come from the database engine.</summary>
    /// <param name="message">What went wrong and what is allowed.</param>
    public BlockDbException(string message)
        : base(message)
    {
    }

    /// <summary>Creates an exception that did not come from the database engine, wrapping a cause.</summary>
    /// <param name="message">What went wrong and what is allowed.</param>
    /// <param name="innerException">The cause.</param>
    public BlockDbException(string message, Exception? innerException)
        : base(message, innerException)
    {
    }

    /// <summary>Creates an exception that carries the engine codes of <paramref name="cause"/> (SQLite's result codes or the server's SQLSTATE), for a failure that <paramref name="cause"/> led to.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="cause">The failure whose codes are kept; also the inner exception.</param>
    private protected BlockDbException(string message, BlockDbException cause)
        : base(message, cause)
    {
        SqliteErrorCode = cause.SqliteErrorCode ?? (cause.SqlState is null ? 0 : null);
        SqliteExtendedErrorCode = cause.SqliteExtendedErrorCode ?? (cause.SqlState is null ? 0 : null);
        SqlState = cause.SqlState;
    }

    /// <summary>Creates an exception carrying SQLite's result codes.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="sqliteErrorCode">The primary result code, for example 5 (<c>SQLITE_BUSY</c>).</param>
    /// <param name="sqliteExtendedErrorCode">The extended result code, for example 2067 (<c>SQLITE_CONSTRAINT_UNIQUE</c>), or the primary code when the provider does not expose it.</param>
    /// <param name="innerException">The provider's own exception; <see langword="null"/> when there is none.</param>
    public BlockDbException(string message, int sqliteErrorCode, int sqliteExtendedErrorCode, Exception? innerException)
        : base(message, innerException)
    {
        SqliteErrorCode = sqliteErrorCode;
        SqliteExtendedErrorCode = sqliteExtendedErrorCode;
    }

    /// <summary>Creates an exception carrying a database server's SQLSTATE.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="sqlState">The five-character SQLSTATE, for example <c>23505</c> (unique violation) or <c>40001</c> (serialization failure).</param>
    /// <param name="innerException">The provider's own exception; <see langword="null"/> when there is none.</param>
    public BlockDbException(string message, string sqlState, Exception? innerException)
        : base(message, innerException)
    {
        SqlState = sqlState;
    }

    /// <summary>SQLite's primary result code (<see cref="SqliteResultCode"/>); <see langword="null"/> when the failure did not come from SQLite (another engine, or no engine counterpart).</summary>
    public int? SqliteErrorCode { get; }

    /// <summary>SQLite's extended result code; <see langword="null"/> when the failure did not come from SQLite.</summary>
    public int? SqliteExtendedErrorCode { get; }

    /// <summary>The server's SQLSTATE (PostgreSQL); <see langword="null"/> for SQLite failures and failures with no engine counterpart.</summary>
    public override string? SqlState { get; }

    /// <summary>The SQLite primary result code, or 0 when there is none.</summary>
    public override int ErrorCode => SqliteErrorCode ?? 0;

    /// <summary>
    /// <see langword="true"/> when retrying may succeed because another connection held a lock or won a conflict:
    /// SQLite's <c>SQLITE_BUSY</c> and <c>SQLITE_LOCKED</c>; SQLSTATE <c>40001</c> (serialization failure),
    /// <c>40P01</c> (deadlock) and <c>55P03</c> (lock not available).
    /// </summary>
    public override bool IsTransient =>
        SqliteErrorCode is SqliteResultCode.Busy or SqliteResultCode.Locked || SqlState is "40001" or "40P01" or "55P03";
}
