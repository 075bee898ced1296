namespace BlockDb;

/// <summary>A remote volume and what it holds.</summary>
/// <param name="Id">The volume ID.</param>
/// <param name="Name">The volume's unique name (for example its remote file name).</param>
/// <param name="State">Where it is in its life.</param>
/// <param name="Size">The remote file's size in bytes, once known (set with <see cref="IBlockWriter.SetVolumeStateAsync"/>), else <see langword="null"/>.</param>
/// <param name="Blocks">The blocks recorded in it (rows).</param>
/// <param name="BlockBytes">The sum of their sizes, in bytes.</param>
/// <param name="UnreferencedBlocks">Its blocks that no blockset references any more (rows).</param>
/// <param name="UnreferencedBytes">The sum of their sizes, in bytes: the volume's waste, which decides compaction.</param>
public sealed record VolumeInfo(long Id, string Name, VolumeState State, long? Size, long Blocks, long BlockBytes, long UnreferencedBlocks, long UnreferencedBytes);
