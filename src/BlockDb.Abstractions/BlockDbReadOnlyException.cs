namespace BlockDb;

/// <summary>
/// A write was asked of a database opened with <see cref="BlockDbOptions.ReadOnly"/>. BlockDb refuses it before
/// the engine is reached, with the engine's own code for the case: SQLite's <c>SQLITE_READONLY</c> (8), so callers
/// that test the code see the same value as for a read-only file; on a database server the SQLSTATE <c>25006</c>
/// (read_only_sql_transaction, <see href="https://www.postgresql.org/docs/current/errcodes-appendix.html"/>), with the
/// SQLite codes <see langword="null"/>. Nothing was written.
/// </summary>
public sealed class BlockDbReadOnlyException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="operation">The refused call, for example <c>SelectXorInsertAsync</c>.</param>
    /// <param name="path">The database file.</param>
    public BlockDbReadOnlyException(string operation, string path)
        : base(
            $"{operation} writes, but {Quoted.Path(path)} was opened with BlockDb:ReadOnly = true; open it without ReadOnly to write. Nothing was written.",
            SqliteResultCode.ReadOnly,
            SqliteResultCode.ReadOnly,
            null)
    {
        Operation = operation;
    }

    /// <summary>Creates the exception for a database server, with SQLSTATE <c>25006</c>.</summary>
    /// <param name="operation">The refused call, for example <c>SelectXorInsertAsync</c>.</param>
    /// <param name="server">The server's host, port and database (never a password).</param>
    /// <param name="sqlState">The SQLSTATE to report: <see cref="ReadOnlySqlState"/>.</param>
    public BlockDbReadOnlyException(string operation, string server, string sqlState)
        : base(
            $"{operation} writes, but the database {Quoted.Value(server)} was opened with BlockDb:ReadOnly = true; open it without ReadOnly to write. Nothing was written.",
            sqlState,
            null)
    {
        Operation = operation;
    }

    /// <summary>The SQLSTATE a server reports for a write in a read-only transaction: <c>25006</c>.</summary>
    public const string ReadOnlySqlState = "25006";

    /// <summary>The refused call.</summary>
    public string Operation { get; }
}
