namespace BlockDb;

/// <summary>
/// A call named a block that is not in the index: in a blockset (by ID, or by hash and size; nothing of that blockset was
/// written), in a list of blocks to move (nothing was moved), or by ID alone.
/// </summary>
public sealed class BlockNotFoundException : BlockDbException
{
    /// <summary>Creates the exception for a block named at a position of a list.</summary>
    /// <param name="message">Which block, at which position of the list.</param>
    /// <param name="position">The 0-based position in the list of the unknown block.</param>
    public BlockNotFoundException(string message, int position)
        : base(message)
    {
        Position = position;
    }

    /// <summary>Creates the exception for a block named by ID alone.</summary>
    /// <param name="blockId">The unknown ID.</param>
    public BlockNotFoundException(long blockId)
        : base($"No block has ID {blockId}.")
    {
        BlockId = blockId;
        Position = -1;
    }

    /// <summary>The 0-based position in the given list of the first unknown block, or -1 when the block was named by ID alone.</summary>
    public int Position { get; }

    /// <summary>The unknown block's ID when the call named it by ID alone, else <see langword="null"/>.</summary>
    public long? BlockId { get; }
}
