namespace BlockDb.PostgreSql.Blocksets;

/// <summary>
/// What adding a blockset did: its ID, or why not (the 0-based position of the first unknown block, of the first block
/// of a volume being deleted, or of the block at which the length passes <see cref="long.MaxValue"/> bytes, with that
/// block's size).
/// </summary>
internal readonly record struct BlocksetAdded(long? Id, int? Missing, int? InDeletedVolume, int? TooLong = null, long TooLongSize = 0);
