namespace BlockDb.PostgreSql.Blocksets;

/// <summary>
/// What adding a blockset did: its ID, or why not (the 0-based position of the first unknown block, or of the first
/// block of a volume being deleted). A length past <see cref="long.MaxValue"/> bytes is refused before it is sent
/// (<see cref="Engine.PgKeys.Of"/>).
/// </summary>
internal readonly record struct BlocksetAdded(long? Id, int? Missing, int? InDeletedVolume);
