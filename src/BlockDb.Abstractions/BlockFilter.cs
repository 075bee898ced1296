namespace BlockDb;

/// <summary>Which blocks <see cref="IBlockDatabase.EnumerateBlocksAsync"/> returns; the default returns all of them.</summary>
public sealed record BlockFilter
{
    /// <summary>Every block.</summary>
    public static BlockFilter All { get; } = new();

    /// <summary>Only the blocks of this volume; <see langword="null"/> (default): any volume, or none.</summary>
    public long? VolumeId { get; init; }

    /// <summary>Only the blocks no blockset references (the garbage a collection deletes). Default <see langword="false"/>.</summary>
    public bool UnreferencedOnly { get; init; }
}
