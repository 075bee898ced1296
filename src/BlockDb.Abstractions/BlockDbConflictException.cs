namespace BlockDb;

/// <summary>
/// The call conflicts with what the index holds, and nothing of it was written: a volume name that is taken, a volume
/// state change that makes no sense (back to <see cref="VolumeState.Temporary"/>, or <see cref="VolumeState.Deleting"/>
/// while blocksets still reference its blocks), blocks recorded into or moved to a volume that is being deleted, a block
/// that is still referenced, or a conversion onto a file that exists. The message says what conflicted and what is
/// allowed. BlockDb raises it after reading the index, so it carries no engine code (a name conflict that the engine
/// itself reports keeps the engine's code instead, <c>SQLITE_CONSTRAINT_UNIQUE</c> or SQLSTATE <c>23505</c>).
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
