using System.Data.Common;

namespace BlockDb;

/// <summary>
/// The one exception type BlockDb raises for database failures, whatever the provider. When SQLite raised
/// the failure, <see cref="SqliteErrorCode"/> and <see cref="SqliteExtendedErrorCode"/> keep its result codes
/// (<see href="https://www.sqlite.org/rescode.html"/>); when BlockDb raised it, both are 0.
/// </summary>
public class BlockDbException : DbException
{
    /// <summary>Creates an exception that did not come from SQLite.</summary>
    /// <param name="message">What went wrong and what is allowed.</param>
    public BlockDbException(string message)
        : this(message, 0, 0, null)
    {
    }

    /// <summary>Creates an exception that did not come from SQLite, wrapping a cause.</summary>
    /// <param name="message">What went wrong and what is allowed.</param>
    /// <param name="innerException">The cause.</param>
    public BlockDbException(string message, Exception? innerException)
        : this(message, 0, 0, innerException)
    {
    }

    /// <summary>Creates an exception carrying SQLite's result codes.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="sqliteErrorCode">The primary result code, for example 5 (<c>SQLITE_BUSY</c>).</param>
    /// <param name="sqliteExtendedErrorCode">The extended result code, for example 2067 (<c>SQLITE_CONSTRAINT_UNIQUE</c>), or the primary code when the provider does not expose it.</param>
    /// <param name="innerException">The provider's own exception, if any.</param>
    public BlockDbException(string message, int sqliteErrorCode, int sqliteExtendedErrorCode, Exception? innerException = null)
        : base(message, innerException)
    {
        SqliteErrorCode = sqliteErrorCode;
        SqliteExtendedErrorCode = sqliteExtendedErrorCode;
    }

    /// <summary>SQLite's primary result code (<see cref="SqliteResultCode"/>), or 0 when BlockDb raised the error.</summary>
    public int SqliteErrorCode { get; }

    /// <summary>SQLite's extended result code, or 0 when BlockDb raised the error.</summary>
    public int SqliteExtendedErrorCode { get; }

    /// <inheritdoc />
    public override int ErrorCode => SqliteErrorCode;

    /// <summary><see langword="true"/> for <c>SQLITE_BUSY</c> and <c>SQLITE_LOCKED</c>: another connection holds the lock.</summary>
    public override bool IsTransient => SqliteErrorCode is SqliteResultCode.Busy or SqliteResultCode.Locked;
}
