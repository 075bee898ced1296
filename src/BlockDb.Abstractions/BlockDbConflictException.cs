namespace BlockDb;

/// <summary>
/// The call conflicts with what the index holds, and nothing of it was written: a volume name taken, a volume state
/// change not allowed, blocks into a volume being deleted, a referenced block or blockset, a conversion onto an
/// existing file. The message says what conflicted and what is allowed. No engine code, unless the engine itself
/// reported the conflict (<c>SQLITE_CONSTRAINT_UNIQUE</c>, SQLSTATE <c>23505</c>).
/// </summary>
public sealed class BlockDbConflictException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What conflicted, and what is allowed.</param>
    public BlockDbConflictException(string message)
        : base(message)
    {
    }
}
