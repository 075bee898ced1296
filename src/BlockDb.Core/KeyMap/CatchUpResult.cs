namespace BlockDb.KeyMap;

/// <summary>What a catch-up saw: the first free block ID in its snapshot (for a session holding the write lock) and the snapshot's version.</summary>
/// <param name="NextId">max(<c>MaxBlockId</c>, the highest row ID) + 1.</param>
/// <param name="Version">The snapshot's generation and schema version.</param>
internal readonly record struct CatchUpResult(long NextId, MapVersion Version);
