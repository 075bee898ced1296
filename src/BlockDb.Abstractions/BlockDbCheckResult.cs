namespace BlockDb;

/// <summary>
/// What <see cref="IBlockDatabase.CheckAsync"/> found, read in one snapshot of the file. Each finding gives a count and
/// the first offending IDs (at most <see cref="MaxListed"/>, lowest first) so a caller can look at them.
/// </summary>
public sealed record BlockDbCheckResult
{
    /// <summary>The most IDs listed per finding.</summary>
    public const int MaxListed = 10;

    /// <summary>The file's block layout.</summary>
    public required BlockLayout Layout { get; init; }

    /// <summary>Rows in <c>Block</c>, <c>Blockset</c> and <c>BlocksetEntry</c>.</summary>
    public required BlockDbCounts Counts { get; init; }

    /// <summary>
    /// (Hash, Size) pairs stored in more than one <c>Block</c> row. BlockDb never writes them; they come from SQL
    /// written outside BlockDb (or, with the KeyMap layout, from a writer that voided its guarantee; see
    /// <see cref="BlockLayout.KeyMap"/>). <see cref="IBlockDatabase.RepairAsync"/> merges them.
    /// </summary>
    public required long DuplicateGroups { get; init; }

    /// <summary><c>Block</c> rows beyond the first of each duplicate group (the rows a repair deletes), and their block IDs (not the lowest ID of their group, which a repair keeps).</summary>
    public required BlockDbFinding Duplicates { get; init; }

    /// <summary><c>BlocksetEntry</c> rows whose <c>BlockID</c> names no block, and the blocksets holding them.</summary>
    public required BlockDbFinding DanglingEntries { get; init; }

    /// <summary>Blocksets whose <c>Length</c> (bytes) differs from the sum of their blocks' sizes, by blockset ID.</summary>
    public required BlockDbFinding LengthMismatches { get; init; }

    /// <summary>Blocksets whose entries' <c>Index</c> values are not exactly 0, 1, …, n − 1, by blockset ID.</summary>
    public required BlockDbFinding EntryOrder { get; init; }

    /// <summary>
    /// Blocks whose ID the layout cannot hold: below 1 for every layout, above 4,294,967,295 for
    /// <see cref="BlockLayout.KeyMap"/>, by block ID. A repair renumbers them.
    /// </summary>
    public required BlockDbFinding IdsOutOfRange { get; init; }

    /// <summary>
    /// Blocks no lookup can ask for, by block ID: a stored hash that is not TEXT (TextHash) or not a BLOB (BlobHash,
    /// KeyMap), or longer than a hash BlockDb accepts (88 characters, 66 bytes), or a size that is not an integer of 1
    /// byte or more. SQL outside BlockDb wrote them; BlockDb never finds them, and a repair leaves them (deleting them
    /// could lose what the writer meant).
    /// </summary>
    public required BlockDbFinding UnusableBlocks { get; init; }

    /// <summary>Blocks recorded in a volume that does not exist or is <see cref="VolumeState.Deleted"/>, by block ID (SQL outside BlockDb wrote them).</summary>
    public required BlockDbFinding VolumeProblems { get; init; }

    /// <summary>
    /// KeyMap only: blocks of the file that this process's key map did not hold after catching up in the same
    /// snapshot (a block it could not find), by block ID. None for the other layouts.
    /// </summary>
    public required BlockDbFinding MapMissing { get; init; }

    /// <summary>
    /// KeyMap only: whether the guard triggers (each with its exact text) and the <c>BlockDbState</c> row are in the
    /// file and no other trigger is (always <see langword="true"/> for the other layouts).
    /// </summary>
    public required bool GuardsPresent { get; init; }

    /// <summary>
    /// The rules of the file's layout found broken, beside the findings above: for a <see cref="BlockLayout.Duplicati"/>
    /// file, Duplicati's consistency rules and the invariants Duplicati relies on (each run on its own, with Duplicati's
    /// message where Duplicati has one); empty for the other layouts and when every rule holds.
    /// </summary>
    public IReadOnlyList<BlockDbRuleFinding> LayoutRules { get; init; } = [];

    /// <summary>What <c>PRAGMA integrity_check</c> returned: <c>ok</c>, or its first messages (<see href="https://www.sqlite.org/pragma.html#pragma_integrity_check"/>).</summary>
    public required string IntegrityCheck { get; init; }

    /// <summary><see langword="true"/> when nothing above was found (<see cref="LayoutRules"/> empty) and <c>integrity_check</c> said <c>ok</c>.</summary>
    public bool IsClean =>
        DuplicateGroups == 0 && !Duplicates.Found && !DanglingEntries.Found && !LengthMismatches.Found && !EntryOrder.Found
        && !IdsOutOfRange.Found && !UnusableBlocks.Found && !VolumeProblems.Found && !MapMissing.Found && GuardsPresent
        && LayoutRules.Count == 0 && IntegrityCheck == "ok";
}
