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
        : this(message, lostWrites, cause, commitOutcomeUnknown: false)
    {
    }

    /// <summary>Creates the exception, saying whether the failure hit the <c>COMMIT</c> itself at a point where the batch may already be durable.</summary>
    /// <param name="message">What failed.</param>
    /// <param name="lostWrites">Writes of the batch that were not known to be committed.</param>
    /// <param name="cause">The failure that ended the batch; its SQLite codes, or its SQLSTATE, are kept.</param>
    /// <param name="commitOutcomeUnknown">See <see cref="CommitOutcomeUnknown"/>.</param>
    /// <exception cref="ArgumentNullException"><paramref name="cause"/> is null.</exception>
    public BlockDbBatchRolledBackException(string message, int lostWrites, BlockDbException cause, bool commitOutcomeUnknown)
        : base(message, cause ?? throw new ArgumentNullException(nameof(cause)))
    {
        LostWrites = lostWrites;
        CommitOutcomeUnknown = commitOutcomeUnknown;
    }

    /// <summary>
    /// Write operations of the rolled-back batch (inserts, select-xor-inserts that inserted, blocksets) that are not
    /// in the file, or, when <see cref="CommitOutcomeUnknown"/> is true, that may or may not be.
    /// </summary>
    public int LostWrites { get; }

    /// <summary>
    /// True when the <c>COMMIT</c> itself failed at a point where the engine may already have made the batch durable,
    /// so its writes may or may not be in the file: a SQLite <c>COMMIT</c> that failed with an error other than
    /// <c>SQLITE_BUSY</c> after SQLite had ended the transaction (in rollback-journal modes the commit point is the
    /// deletion of the journal, after the database file was written: an I/O error there leaves a committed file;
    /// see <see href="https://www.sqlite.org/atomiccommit.html"/>), or a PostgreSQL connection lost while its
    /// <c>COMMIT</c> was in flight (SQLSTATE class 08, or no answer; see
    /// <see href="https://www.postgresql.org/docs/current/protocol-flow.html"/>). Do not assume either outcome: repeat
    /// the writes (select-xor-insert returns the ID of a block that did commit; a blockset added with a full hash is
    /// found by <c>FindBlocksetAsync</c>, one added without may now be in the file twice, which only costs its rows).
    /// False when the batch is known not to be in the file.
    /// </summary>
    public bool CommitOutcomeUnknown { get; }
}
