namespace BlockDb;

/// <summary>Helpers that keep an engine's error code when BlockDb adds to a message.</summary>
internal static class BlockDbErrors
{
    /// <summary>A <see cref="BlockDbException"/> with a new message and the same engine codes, wrapping <paramref name="e"/>.</summary>
    public static BlockDbException Rephrase(this BlockDbException e, string message) => e switch
    {
        { SqliteErrorCode: { } code } => new BlockDbException(message, code, e.SqliteExtendedErrorCode ?? code, e),
        { SqlState: { } state } => new BlockDbException(message, state, e),
        _ => new BlockDbException(message, e),
    };
}
