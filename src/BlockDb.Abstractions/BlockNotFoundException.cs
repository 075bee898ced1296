namespace BlockDb;

/// <summary>A blockset named a block that is not in the index (by ID, or by hash and size). Nothing of that blockset was written.</summary>
public sealed class BlockNotFoundException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">Which block, at which position of the blockset.</param>
    /// <param name="position">The 0-based position in the blockset of the unknown block.</param>
    public BlockNotFoundException(string message, int position)
        : base(message)
    {
        Position = position;
    }

    /// <summary>The 0-based position in the given blockset of the first unknown block.</summary>
    public int Position { get; }
}
