namespace BlockDb;

/// <summary>One block of the index.</summary>
/// <param name="Id">The block ID.</param>
/// <param name="Hash">The block's hash (base64).</param>
/// <param name="Size">The block's size in bytes.</param>
/// <param name="VolumeId">The volume holding it, or <see langword="null"/> when it was recorded without one.</param>
public readonly record struct BlockInfo(long Id, string Hash, long Size, long? VolumeId);
