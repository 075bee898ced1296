namespace BlockDb;

/// <summary>
/// One block of a blockset with its hash as bytes, as <see cref="IBlockReader.ListBlocksetBlocksAsync(long, int, Memory{BinaryBlocksetBlock}, CancellationToken)"/>
/// writes it into the caller's buffer: no string per block (<see cref="BlockHash.ToString"/> gives the base64 text when wanted).
/// </summary>
/// <param name="Index">The block's 0-based position in the blockset.</param>
/// <param name="BlockId">The block's ID.</param>
/// <param name="Hash">The block's hash (bytes, held inline).</param>
/// <param name="Size">The block's size in bytes.</param>
public readonly record struct BinaryBlocksetBlock(int Index, long BlockId, BlockHash Hash, long Size);
