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
/// <param name="CarriedObjects">
/// The schema objects of another application (a backup engine's tables, their indexes, views and triggers) carried into
/// the new file unchanged, by name in the order they were created: tables first, then indexes, views, triggers.
/// </param>
/// <param name="CarriedRows">Rows of the carried tables copied.</param>
public sealed record ConversionResult(
    BlockLayout SourceLayout,
    BlockLayout TargetLayout,
    long Volumes,
    long Blocks,
    long MergedDuplicates,
    long Blocksets,
    long BlocksetEntries,
    TimeSpan Elapsed,
    BlockDbCheckResult Check,
    IReadOnlyList<string> CarriedObjects,
    long CarriedRows);
