namespace BlockDb;

/// <summary>No blockset has the given ID.</summary>
public sealed class BlocksetNotFoundException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="blocksetId">The unknown ID.</param>
    public BlocksetNotFoundException(long blocksetId)
        : base($"No blockset has ID {blocksetId}.")
    {
        BlocksetId = blocksetId;
    }

    /// <summary>The unknown blockset ID.</summary>
    public long BlocksetId { get; }
}
