namespace BlockDb;

/// <summary>
/// A block's hash as the Duplicati layout stores it (padded base64 text) and its size in bytes: what the Duplicati
/// blockset rules read back from <c>Block</c> rows and hash into blocklists. Callers name blocks by <see cref="BlockKey"/>.
/// </summary>
internal readonly record struct TextBlockKey(string Hash, long Size);
