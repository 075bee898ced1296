namespace BlockDb;

/// <summary>
/// One block of a blockset, as <see cref="IBlockReader.ListBlocksetBlocksAsync"/> writes it into the caller's buffer
/// (the join of <c>BlocksetEntry</c> and <c>Block</c>): no string per block (<see cref="BlockKey.ToString"/> and
/// <see cref="BlockHash.ToString"/> give Duplicati's base64 text when wanted).
/// </summary>
/// <param name="Index">The block's 0-based position in the blockset.</param>
/// <param name="BlockId">The block's ID.</param>
/// <param name="Block">The block's hash (bytes, held inline) and size in bytes.</param>
public readonly record struct BlocksetBlock(int Index, long BlockId, BlockKey Block);
