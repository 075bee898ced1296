namespace BlockDb.Sessions;

/// <summary>What a layout session does at the edges of its write transaction (KeyMap's <c>KeyMapWrites</c> raises the high-water mark and merges its inserts).</summary>
internal interface IBatchParticipant
{
    /// <summary>Inside the transaction, just before <c>COMMIT</c>; a failure rolls the batch back.</summary>
    void BeforeCommit();

    /// <summary>After a successful <c>COMMIT</c>. Must not throw.</summary>
    void AfterCommit();

    /// <summary>After the transaction ended without committing (rollback, failed commit, or SQLite rolled it back). Must not throw.</summary>
    void AfterRollback();

    /// <summary>What <see cref="AfterRollbackTo"/> is given when a savepoint of the transaction opens: where the participant's own record of the transaction's writes stands.</summary>
    long SavepointMark { get; }

    /// <summary>After the transaction was rolled back to a savepoint opened at <paramref name="mark"/> (it stays open): forgets what it recorded since. Must not throw.</summary>
    void AfterRollbackTo(long mark);
}
