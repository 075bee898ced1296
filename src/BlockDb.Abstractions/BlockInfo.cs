namespace BlockDb;

/// <summary>One block of the index.</summary>
/// <param name="Id">The block ID.</param>
/// <param name="Block">The block's hash and size in bytes.</param>
/// <param name="VolumeId">The volume holding it, or <see langword="null"/> when it was recorded without one.</param>
public readonly record struct BlockInfo(long Id, BlockKey Block, long? VolumeId);
