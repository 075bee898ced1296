namespace BlockDb;

/// <summary>Where a conversion is: the table it copies and how far, reported after each transaction of the new file.</summary>
/// <param name="Table">The table being copied: <c>Remotevolume</c>, <c>Block</c>, <c>Blockset</c>, <c>BlocksetEntry</c>, or a carried table of another application (<see cref="ConversionResult.CarriedObjects"/>).</param>
/// <param name="Rows">Rows of that table copied so far.</param>
/// <param name="TotalRows">Rows of that table in the source.</param>
public readonly record struct ConversionProgress(string Table, long Rows, long TotalRows);
