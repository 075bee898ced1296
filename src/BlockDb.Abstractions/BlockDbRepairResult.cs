namespace BlockDb;

/// <summary>What <see cref="IBlockDatabase.RepairAsync"/> changed, in one transaction, and the check it ran afterwards.</summary>
public sealed record BlockDbRepairResult
{
    /// <summary>Duplicate (Hash, Size) groups merged into their lowest ID.</summary>
    public required long MergedGroups { get; init; }

    /// <summary>Duplicate <c>Block</c> rows deleted.</summary>
    public required long DeletedBlocks { get; init; }

    /// <summary><c>BlocksetEntry</c> rows repointed from a deleted duplicate to the kept block.</summary>
    public required long RepointedEntries { get; init; }

    /// <summary>KeyMap blocks given a new ID inside 1 to 4,294,967,295 (their entries follow).</summary>
    public required long RenumberedBlocks { get; init; }

    /// <summary>
    /// The check after the repair. A repair does not invent data: dangling entries and length mismatches are
    /// reported here, not changed.
    /// </summary>
    public required BlockDbCheckResult After { get; init; }
}
