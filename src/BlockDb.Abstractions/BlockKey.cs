namespace BlockDb;

/// <summary>A block's identity: its hash (standard base64 with padding, 44 characters for SHA-256) and its size in bytes.</summary>
/// <param name="Hash">The block hash as standard base64 with <c>=</c> padding.</param>
/// <param name="Size">The block size in bytes, 1 or more.</param>
public readonly record struct BlockKey(string Hash, long Size);
