namespace BlockDb;

/// <summary>
/// A session's open commit batch was rolled back instead of committed: SQLite rolled the transaction back on its
/// own (<c>SQLITE_FULL</c>, <c>SQLITE_IOERR</c>, <c>SQLITE_NOMEM</c>, some <c>SQLITE_BUSY</c> cases; see
/// <see href="https://www.sqlite.org/lang_transaction.html"/>), or its <c>COMMIT</c> failed. The batch's
/// <see cref="LostWrites"/> uncommitted writes are gone; everything committed before is intact. The next write
/// starts a new batch. <see cref="BlockDbException.SqliteErrorCode"/> keeps the code of the failure that caused it.
/// </summary>
public sealed class BlockDbBatchRolledBackException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What failed.</param>
    /// <param name="lostWrites">Writes of the batch that were not committed.</param>
    /// <param name="cause">The failure that ended the batch; its SQLite codes are kept.</param>
    public BlockDbBatchRolledBackException(string message, int lostWrites, BlockDbException cause)
        : base(message, cause?.SqliteErrorCode ?? 0, cause?.SqliteExtendedErrorCode ?? 0, cause)
    {
        ArgumentNullException.ThrowIfNull(cause);
        LostWrites = lostWrites;
    }

    /// <summary>Write operations of the rolled-back batch (inserts, select-xor-inserts that inserted, blocksets) that are not in the file.</summary>
    public int LostWrites { get; }
}
