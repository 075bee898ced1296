namespace BlockDb;

/// <summary>
/// A session's open commit batch was rolled back instead of committed: SQLite rolled the transaction back on its
/// own (<c>SQLITE_FULL</c>, <c>SQLITE_IOERR</c>, <c>SQLITE_NOMEM</c>, some <c>SQLITE_BUSY</c> cases; see
/// <see href="https://www.sqlite.org/lang_transaction.html"/>), or its <c>COMMIT</c> failed. The batch's
/// <see cref="LostWrites"/> uncommitted writes are gone; everything committed before is intact. The next write
/// starts a new batch. <see cref="BlockDbException.SqliteErrorCode"/> keeps the code of the failure that caused it, or,
/// on a database server, <see cref="BlockDbException.SqlState"/> keeps its SQLSTATE (the server aborted the transaction:
/// a lost connection, a statement timeout <c>57014</c>, a deadlock <c>40P01</c>; see
/// <see href="https://www.postgresql.org/docs/current/tutorial-transactions.html"/>) and the SQLite codes are
/// <see langword="null"/>.
/// </summary>
public sealed class BlockDbBatchRolledBackException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What failed.</param>
    /// <param name="lostWrites">Writes of the batch that were not committed.</param>
    /// <param name="cause">The failure that ended the batch; its SQLite codes, or its SQLSTATE, are kept.</param>
    /// <exception cref="ArgumentNullException"><paramref name="cause"/> is null.</exception>
    public BlockDbBatchRolledBackException(string message, int lostWrites, BlockDbException cause)
        : base(message, cause ?? throw new ArgumentNullException(nameof(cause)))
    {
        LostWrites = lostWrites;
    }

    /// <summary>Write operations of the rolled-back batch (inserts, select-xor-inserts that inserted, blocksets) that are not in the file.</summary>
    public int LostWrites { get; }
}
