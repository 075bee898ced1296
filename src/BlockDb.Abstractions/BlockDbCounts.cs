namespace BlockDb;

/// <summary>Row counts of the index, committed or written by the asking session.</summary>
/// <param name="Blocks">Rows in <c>Block</c>: distinct (hash, size) pairs.</param>
/// <param name="Blocksets">Rows in <c>Blockset</c>.</param>
/// <param name="BlocksetEntries">Rows in <c>BlocksetEntry</c>.</param>
public readonly record struct BlockDbCounts(long Blocks, long Blocksets, long BlocksetEntries);
