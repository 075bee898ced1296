namespace BlockDb;

/// <summary>
/// A session's open batch was rolled back instead of committed: the engine ended the transaction on its own (SQLite:
/// <c>SQLITE_FULL</c>, <c>SQLITE_IOERR</c>, <c>SQLITE_NOMEM</c>, some <c>SQLITE_BUSY</c>,
/// <see href="https://www.sqlite.org/lang_transaction.html"/>; PostgreSQL: a lost connection, <c>57014</c>,
/// <c>40P01</c>), its <c>COMMIT</c> failed, or (SQLite) a write of <see cref="IBlockWriter.AddBlocksetAsync"/> failed
/// after the call's checks had passed, with no savepoint to undo the call alone, and BlockDb rolled the batch back with
/// it. Its <see cref="LostWrites"/> writes are gone (the failed call's own included), everything committed before is
/// intact, and the next write starts a new batch. The cause's SQLite codes or SQLSTATE are kept.
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
    /// True when the <c>COMMIT</c> itself failed where the engine may already have made the batch durable: a SQLite
    /// error other than <c>SQLITE_BUSY</c> after SQLite ended the transaction
    /// (<see href="https://www.sqlite.org/atomiccommit.html"/>), or a PostgreSQL connection lost during <c>COMMIT</c>
    /// (SQLSTATE class 08). Repeat the writes: select-xor-insert returns a committed block's ID, and
    /// <c>FindBlocksetAsync</c> finds a committed blockset by its full hash. False: the batch is not in the file.
    /// </summary>
    public bool CommitOutcomeUnknown { get; }
}
