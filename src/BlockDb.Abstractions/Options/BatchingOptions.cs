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
    /// Commit after this many write operations (insert, a select-xor-insert that inserted, add blockset).
    /// 1: every write commits on its own. 0: commit only on <c>CommitAsync</c> (or dispose). Default 1000.
    /// </summary>
    public int CommitEvery { get; set; } = 1000;

    /// <summary>
    /// Commit once the open batch is this many milliseconds old: checked at the end of each write, and by a timer
    /// that commits an idle session's batch from the session's own gate (between its calls), so a session that
    /// stops writing does not keep the write lock. A failed timer commit is thrown by the session's next call (or
    /// its dispose) as <see cref="BlockDbBatchRolledBackException"/>. <see langword="null"/> (default): no age limit.
    /// Allowed: 1 to 86,400,000.
    /// </summary>
    public int? CommitAfterMilliseconds { get; set; }

    /// <summary>What disposing a session does with a batch that is still open. Default: <see cref="DisposeBehavior.Commit"/>.</summary>
    public DisposeBehavior OnDispose { get; set; } = DisposeBehavior.Commit;

    /// <summary>A copy of these options (changing one does not change the other).</summary>
    /// <returns>The copy.</returns>
    public BatchingOptions Clone() => (BatchingOptions)MemberwiseClone();

    /// <summary>Checks the values.</summary>
    /// <exception cref="BlockDbConfigurationException">A value is out of range.</exception>
    public void Validate()
    {
        OptionGuard.InRange(CommitEvery, 0, MaxCommitEvery, "BlockDb:Batching:CommitEvery", "write operations (0 = only on an explicit commit)");
        OptionGuard.InRange(CommitAfterMilliseconds, 1, 86_400_000, "BlockDb:Batching:CommitAfterMilliseconds", "milliseconds");
        OptionGuard.Defined(OnDispose, "BlockDb:Batching:OnDispose");
    }
}

/// <summary>What disposing a repository session does with uncommitted writes.</summary>
public enum DisposeBehavior
{
    /// <summary>Commit them: everything written before dispose is kept.</summary>
    Commit = 0,

    /// <summary>Roll them back: only what was committed before dispose is kept.</summary>
    Rollback = 1,
}
