namespace BlockDb;

/// <summary>What <see cref="IBlockWriter.DeleteUnreferencedBlocksAsync"/> deleted.</summary>
/// <param name="Blocks">The blocks deleted (rows).</param>
/// <param name="Bytes">The sum of their sizes, in bytes.</param>
/// <param name="ByVolume">Blocks and bytes deleted per volume (a volume ID, or <see langword="null"/> for blocks recorded without one), by volume ID.</param>
public sealed record CollectResult(long Blocks, long Bytes, IReadOnlyList<VolumeCollected> ByVolume);

/// <summary>The blocks one collection deleted from one volume.</summary>
/// <param name="VolumeId">The volume, or <see langword="null"/> for blocks recorded without one.</param>
/// <param name="Blocks">The blocks deleted (rows).</param>
/// <param name="Bytes">The sum of their sizes, in bytes.</param>
public readonly record struct VolumeCollected(long? VolumeId, long Blocks, long Bytes);
