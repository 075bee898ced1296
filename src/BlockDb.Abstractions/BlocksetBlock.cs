namespace BlockDb;

/// <summary>One block of a blockset, as the join of <c>BlocksetEntry</c> and <c>Block</c> returns it.</summary>
/// <param name="Index">The block's 0-based position in the blockset.</param>
/// <param name="BlockId">The block's ID.</param>
/// <param name="Hash">The block's hash (base64).</param>
/// <param name="Size">The block's size in bytes.</param>
public readonly record struct BlocksetBlock(int Index, long BlockId, string Hash, long Size);
