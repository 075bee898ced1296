namespace BlockDb.Backup.Hashing;

/// <summary>A file cut into blocks and hashed, or why it could not be.</summary>
/// <param name="Path">The full path.</param>
/// <param name="Length">The bytes read.</param>
/// <param name="FullHash">The SHA-256 of the whole content (base64); <see langword="null"/> when unreadable.</param>
/// <param name="Blocks">The blocks in file order; empty for an empty file.</param>
/// <param name="Error">Why the file could not be read, or <see langword="null"/>.</param>
internal sealed record HashedFile(string Path, long Length, string? FullHash, IReadOnlyList<BlockKey> Blocks, string? Error)
{
    public bool IsUnreadable => Error is not null;

    public static HashedFile Unreadable(string path, string error) => new(path, 0, null, [], error);
}
