namespace BlockDb;

/// <summary>
/// What <see cref="IBlockDatabase.CheckAsync"/> found, read in one snapshot of the file. Each count comes with
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
    /// written outside BlockDb or from files written by BlockDb before schema version 3.
    /// <see cref="IBlockDatabase.RepairAsync"/> merges them.
    /// </summary>
    public required long DuplicateGroups { get; init; }

    /// <summary><c>Block</c> rows beyond the first of each duplicate group (the rows a repair deletes).</summary>
    public required long DuplicateRows { get; init; }

    /// <summary>The IDs of the first duplicate rows (not the lowest ID of their group, which a repair keeps).</summary>
    public required IReadOnlyList<long> DuplicateBlockIds { get; init; }

    /// <summary><c>BlocksetEntry</c> rows whose <c>BlockID</c> names no block.</summary>
    public required long DanglingEntries { get; init; }

    /// <summary>The blocksets holding the first dangling entries.</summary>
    public required IReadOnlyList<long> DanglingEntryBlocksetIds { get; init; }

    /// <summary>Blocksets whose <c>Length</c> (bytes) differs from the sum of their blocks' sizes.</summary>
    public required long LengthMismatches { get; init; }

    /// <summary>The first blocksets whose length does not match.</summary>
    public required IReadOnlyList<long> LengthMismatchBlocksetIds { get; init; }

    /// <summary>Blocksets whose entries' <c>Index</c> values are not exactly 0, 1, …, n − 1.</summary>
    public required long EntryOrderProblems { get; init; }

    /// <summary>The first blocksets with gaps or out-of-range indexes.</summary>
    public required IReadOnlyList<long> EntryOrderBlocksetIds { get; init; }

    /// <summary>
    /// Blocks whose ID the layout cannot hold: below 1 for every layout, above 4,294,967,295 for
    /// <see cref="BlockLayout.KeyMap"/>. A repair renumbers them (KeyMap).
    /// </summary>
    public required long IdsOutOfRange { get; init; }

    /// <summary>The first block IDs out of range.</summary>
    public required IReadOnlyList<long> OutOfRangeBlockIds { get; init; }

    /// <summary>
    /// Blocks no lookup can ask for: a stored hash that is not TEXT (TextHash) or not a BLOB (BlobHash, KeyMap), or
    /// longer than a hash BlockDb accepts (88 characters, 66 bytes), or a size that is not an integer of 1 byte or more.
    /// SQL outside BlockDb wrote them; BlockDb never finds them, and a repair leaves them (deleting them could lose what
    /// the writer meant).
    /// </summary>
    public required long UnusableHashes { get; init; }

    /// <summary>The first blocks with an unusable hash.</summary>
    public required IReadOnlyList<long> UnusableHashBlockIds { get; init; }

    /// <summary>
    /// KeyMap only: blocks of the file that this process's key map did not hold after catching up in the same
    /// snapshot (a block it could not find). Always 0 for the other layouts.
    /// </summary>
    public required long MapMissing { get; init; }

    /// <summary>The first block IDs the key map did not hold.</summary>
    public required IReadOnlyList<long> MapMissingBlockIds { get; init; }

    /// <summary>
    /// KeyMap only: whether the guard triggers (each with its exact text) and the <c>BlockDbState</c> row are in the
    /// file and no other trigger is (always <see langword="true"/> for the other layouts).
    /// </summary>
    public required bool GuardsPresent { get; init; }

    /// <summary>What <c>PRAGMA integrity_check</c> returned: <c>ok</c>, or its first messages (<see href="https://www.sqlite.org/pragma.html#pragma_integrity_check"/>).</summary>
    public required string IntegrityCheck { get; init; }

    /// <summary><see langword="true"/> when nothing above was found and <c>integrity_check</c> said <c>ok</c>.</summary>
    public bool IsClean =>
        DuplicateGroups == 0 && DanglingEntries == 0 && LengthMismatches == 0 && EntryOrderProblems == 0
        && IdsOutOfRange == 0 && UnusableHashes == 0 && MapMissing == 0 && GuardsPresent && IntegrityCheck == "ok";
}
