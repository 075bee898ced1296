namespace BlockDb.Backup.Comparison;

/// <summary>What <c>compare</c> read from one database: counts and order-independent digests of its content.</summary>
/// <param name="Path">The database file.</param>
/// <param name="Provider">The provider it was read with.</param>
/// <param name="SqliteVersion">That provider's SQLite version.</param>
/// <param name="Counts">Row counts (<c>GetCountsAsync</c>).</param>
/// <param name="ReferencedBlocks">Distinct (hash, size) pairs referenced by some blockset.</param>
/// <param name="BlocksDigest">SHA-256 of the sorted set of referenced (hash, size) pairs.</param>
/// <param name="BlocksetsDigest">SHA-256 of the sorted multiset of blockset digests (length, full hash, ordered block list).</param>
/// <param name="PathDigests">Path → blockset digest, from the sidecar; <see langword="null"/> without a sidecar.</param>
/// <param name="Elapsed">How long reading took.</param>
internal sealed record DatabaseSnapshot(
    string Path,
    string Provider,
    string SqliteVersion,
    BlockDbCounts Counts,
    long ReferencedBlocks,
    string BlocksDigest,
    string BlocksetsDigest,
    IReadOnlyDictionary<string, string>? PathDigests,
    TimeSpan Elapsed)
{
    /// <summary>Blocks in no blockset (left by a cancelled run): counted, but not comparable by content through the repository API.</summary>
    public long UnreferencedBlocks => Counts.Blocks - ReferencedBlocks;
}
