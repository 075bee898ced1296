namespace BlockDb;

/// <summary>A blockset: one file's content.</summary>
/// <param name="Id">The blockset ID.</param>
/// <param name="Length">The total size in bytes (the sum of its blocks' sizes).</param>
/// <param name="FullHash">The hash of the whole content (base64), or <see langword="null"/> when none was given.</param>
/// <param name="BlockCount">The number of blockset entries (blocks, counting repeats).</param>
public sealed record BlocksetInfo(long Id, long Length, string? FullHash, int BlockCount);
