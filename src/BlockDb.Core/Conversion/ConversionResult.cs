namespace BlockDb;

/// <summary>What <see cref="BlockDbConverter.ConvertAsync"/> copied, and the check of the new file.</summary>
/// <param name="SourceLayout">The source file's layout.</param>
/// <param name="TargetLayout">The new file's layout.</param>
/// <param name="Volumes">Volumes copied (rows).</param>
/// <param name="Blocks">Blocks copied (rows), duplicates merged away not counted.</param>
/// <param name="MergedDuplicates">Duplicate block rows merged into their lowest ID (0 unless <see cref="ConversionOptions.MergeDuplicates"/>).</param>
/// <param name="Blocksets">Blocksets copied (rows).</param>
/// <param name="BlocksetEntries">Blockset entries copied (rows).</param>
/// <param name="Elapsed">The time the copy took, check included.</param>
/// <param name="Check">The new file's check (<see cref="IBlockDatabase.CheckAsync"/>).</param>
public sealed record ConversionResult(
    BlockLayout SourceLayout,
    BlockLayout TargetLayout,
    long Volumes,
    long Blocks,
    long MergedDuplicates,
    long Blocksets,
    long BlocksetEntries,
    TimeSpan Elapsed,
    BlockDbCheckResult Check);
