namespace BlockDb;

/// <summary>A block's identity: its hash (standard base64 with padding, 44 characters for SHA-256) and its size in bytes.</summary>
/// <param name="Hash">The block hash as standard base64 with <c>=</c> padding.</param>
/// <param name="Size">The block size in bytes, 1 or more.</param>
public readonly record struct BlockKey(string Hash, long Size);

/// <summary>A block's identity with its hash as bytes: the allocation-free form of <see cref="BlockKey"/>, for the calls that take many blocks at once.</summary>
/// <param name="Hash">The block hash (1 to <see cref="BlockHash.MaxBytes"/> bytes).</param>
/// <param name="Size">The block size in bytes, 1 or more.</param>
public readonly record struct BinaryBlockKey(BlockHash Hash, long Size);
