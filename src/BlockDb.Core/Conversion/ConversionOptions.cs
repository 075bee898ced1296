namespace BlockDb;

/// <summary>How <see cref="BlockDbConverter.ConvertAsync"/> copies an index into a new file.</summary>
public sealed record ConversionOptions
{
    /// <summary>
    /// Merge (Hash, Size) duplicates of the source into their lowest ID while copying (their blockset entries then name
    /// that ID), as <see cref="IBlockDatabase.RepairAsync"/> would. <see langword="false"/> (default): a source with
    /// duplicates is refused with <see cref="BlockDbConflictException"/> and nothing is written.
    /// </summary>
    public bool MergeDuplicates { get; init; }

    /// <summary>Rows written per transaction of the new file (default 100,000; 1 to 10,000,000).</summary>
    public int RowsPerTransaction { get; init; } = 100_000;
}
