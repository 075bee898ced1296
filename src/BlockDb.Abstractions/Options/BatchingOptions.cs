namespace BlockDb;

/// <summary>
/// Commit batching: writes of a session run inside one transaction that is committed every
/// <see cref="CommitEvery"/> writes and/or once it is <see cref="CommitAfterMilliseconds"/> old,
/// and on <c>CommitAsync</c>. A write is durable (acknowledged) only once its batch has committed.
/// </summary>
public sealed class BatchingOptions
{
    /// <summary>The largest <see cref="CommitEvery"/> accepted: 10,000,000 write operations.</summary>
    public const int MaxCommitEvery = 10_000_000;

    /// <summary>
    /// Commit after this many write operations (insert, a select-xor-insert that inserted, add blockset), checked at
    /// the end of each write call: a call that writes many (a span of blocks) commits once, at its end.
    /// 1: every write call commits on its own. 0: commit only on <c>CommitAsync</c> (or dispose). Default 1000.
    /// </summary>
    public int CommitEvery { get; set; } = 1000;

    /// <summary>
    /// Commit once the open batch is this many milliseconds old, also while the session is idle (so it does not keep the
    /// write lock); a failed idle commit is thrown by the session's next call or dispose. <see langword="null"/>
    /// (default): no age limit. Allowed: 1 to 86,400,000.
    /// </summary>
    public int? CommitAfterMilliseconds { get; set; }

    /// <summary>
    /// Read batching (SQLite): how many reads outside a write batch share one read transaction (a snapshot). Reads under
    /// it miss what others commit after it began until it ends: after this many reads, after
    /// <see cref="ReadTransactionMilliseconds"/>, or when the session writes, commits, rolls back or is disposed; a write
    /// always sees everything committed. <see langword="null"/> (default): 256 in WAL mode, 1 in the other journal modes.
    /// Allowed: 1 to 1,000,000; PostgreSQL refuses it. See <see href="https://www.sqlite.org/wal.html"/>.
    /// </summary>
    public int? ReadsPerTransaction { get; set; }

    /// <summary>The longest a batched read transaction is held, in milliseconds (<see cref="ReadsPerTransaction"/>). Default 50; allowed 1 to 60,000.</summary>
    public int ReadTransactionMilliseconds { get; set; } = 50;

    /// <summary>What disposing a session does with a batch that is still open. Default: <see cref="DisposeBehavior.Commit"/>.</summary>
    public DisposeBehavior OnDispose { get; set; } = DisposeBehavior.Commit;

    /// <summary>A copy of these options (changing one does not change the other).</summary>
    /// <returns>The copy.</returns>
    internal BatchingOptions Clone() => (BatchingOptions)MemberwiseClone();

    /// <summary>Checks the values.</summary>
    /// <exception cref="BlockDbConfigurationException">A value is out of range.</exception>
    internal void Validate()
    {
        OptionGuard.InRange(CommitEvery, 0, MaxCommitEvery, "BlockDb:Batching:CommitEvery", "write operations (0 = only on an explicit commit)");
        OptionGuard.InRange(CommitAfterMilliseconds, 1, 86_400_000, "BlockDb:Batching:CommitAfterMilliseconds", "milliseconds");
        OptionGuard.Defined(OnDispose, "BlockDb:Batching:OnDispose");
        OptionGuard.InRange(ReadsPerTransaction, 1, 1_000_000, "BlockDb:Batching:ReadsPerTransaction", "reads (1 = each read on its own)");
        OptionGuard.InRange(ReadTransactionMilliseconds, 1, 60_000, "BlockDb:Batching:ReadTransactionMilliseconds", "milliseconds");
    }
}

/// <summary>What disposing a session does with uncommitted writes.</summary>
public enum DisposeBehavior
{
    /// <summary>Commit them: everything written before dispose is kept.</summary>
    Commit = 0,

    /// <summary>Roll them back: only what was committed before dispose is kept.</summary>
    Rollback = 1,
}
