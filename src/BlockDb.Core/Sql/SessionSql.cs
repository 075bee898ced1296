using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>
/// The statements of the services every layout's sessions share (blocksets, volumes, collection, the block reads and
/// listings) that a layout may replace with its own, each with the same parameters in the same order as BlockDb's:
/// <see cref="Own"/> for BlockDb's files, <see cref="BlockDbSql.DuplicatiSession"/> for a Duplicati database. The
/// services bind by position and never test which layout they run on (<see cref="Layouts.LayoutState.Sql"/>).
/// </summary>
internal sealed record SessionSql
{
    /// <summary>BlockDb's own files (TextHash, BlobHash, KeyMap).</summary>
    public static SessionSql Own { get; } = new()
    {
        InsertBlockset = BlockDbSql.InsertBlockset,
        GetBlock = BlockDbSql.GetBlock,
        EnumerateBlocks = BlockDbSql.EnumerateBlocks,
        GetVolumeState = BlockDbSql.GetVolumeState,
        GetVolume = BlockDbSql.GetVolume,
        EnumerateVolumes = BlockDbSql.EnumerateVolumes,
        FindVolumeId = BlockDbSql.VolumeIdByName,
        VolumeNameTaken = BlockDbSql.VolumeIdByName,
        InsertVolume = BlockDbSql.InsertVolume,
        SetVolumeState = BlockDbSql.SetVolumeState,
        VolumeHasReferencedBlocks = BlockDbSql.VolumeHasReferencedBlocks,
        UnreferencedByVolume = BlockDbSql.UnreferencedByVolume,
        UnreferencedInVolume = BlockDbSql.UnreferencedInVolume,
        DeleteUnreferenced = BlockDbSql.DeleteUnreferenced,
        DeleteUnreferencedInVolume = BlockDbSql.DeleteUnreferencedInVolume,
        BlockIdFloor = BlockDbSql.BlockIdFloor,
        BlocksetIdFloor = BlockDbSql.BlocksetIdFloor,
    };

    /// <summary>
    /// Inserts a blockset (<c>@Length</c>, <c>@FullHash</c>); its ID is the connection's
    /// <see cref="ISqliteConnection.LastInsertRowId"/>. Inserts no row only for a layout with blockset rules whose unique
    /// (FullHash, Length) holds the blockset already (its find-or-add; the service then finds it).
    /// </summary>
    public required SqlStatement InsertBlockset { get; init; }

    /// <summary>A block's hash, size and volume (NULL when it has none) by <c>@ID</c>.</summary>
    public required SqlStatement GetBlock { get; init; }

    /// <summary>The block listing: ID, hash, size, volume; <c>@VolumeID</c>, <c>@Unreferenced</c> as <see cref="BlockDbSql.EnumerateBlocks"/>.</summary>
    public required SqlStatement EnumerateBlocks { get; init; }

    /// <summary>The state of a volume that can hold blocks, by <c>@ID</c>; no row for any other ID.</summary>
    public required SqlStatement GetVolumeState { get; init; }

    /// <summary>A volume as <see cref="Volumes.VolumeService.ReadVolume"/> reads it, by <c>@ID</c>.</summary>
    public required SqlStatement GetVolume { get; init; }

    /// <summary>Every volume as <see cref="GetVolume"/> gives it, in ID order.</summary>
    public required SqlStatement EnumerateVolumes { get; init; }

    /// <summary>A volume's ID by <c>@Name</c> (the volumes <see cref="GetVolume"/> shows).</summary>
    public required SqlStatement FindVolumeId { get; init; }

    /// <summary>The ID of any row holding <c>@Name</c>, which a new volume cannot take.</summary>
    public required SqlStatement VolumeNameTaken { get; init; }

    /// <summary>Registers a volume (<c>@Name</c>, <c>@State</c>) returning its ID; a layout's statement may return no row when the file cannot take one (<see cref="InsertVolumeRefused"/>).</summary>
    public required SqlStatement InsertVolume { get; init; }

    /// <summary>Why <see cref="InsertVolume"/> returned no row (a sentence), or null when it always returns one.</summary>
    public string? InsertVolumeRefused { get; init; }

    /// <summary>Sets a volume's state (<c>@State</c>, <c>@Size</c>, <c>@ID</c>).</summary>
    public required SqlStatement SetVolumeState { get; init; }

    /// <summary>Run with <c>@ID</c> after a volume became Deleted, in the same step.</summary>
    public IReadOnlyList<SqlStatement> AfterVolumeDeleted { get; init; } = [];

    /// <summary>Whether a volume (<c>@ID</c>) holds a block that something still references (1 or 0).</summary>
    public required SqlStatement VolumeHasReferencedBlocks { get; init; }

    /// <summary>Run with <c>@To</c>, <c>@ID</c> after each block moved.</summary>
    public IReadOnlyList<SqlStatement> AfterMove { get; init; } = [];

    /// <summary>The unreferenced blocks per volume: volume, count, bytes.</summary>
    public required SqlStatement UnreferencedByVolume { get; init; }

    /// <summary>One volume's (<c>@VolumeID</c>) unreferenced blocks: volume, count, bytes.</summary>
    public required SqlStatement UnreferencedInVolume { get; init; }

    /// <summary>Deletes every unreferenced block.</summary>
    public required SqlStatement DeleteUnreferenced { get; init; }

    /// <summary>Deletes one volume's (<c>@VolumeID</c>) unreferenced blocks.</summary>
    public required SqlStatement DeleteUnreferencedInVolume { get; init; }

    /// <summary>Run before <see cref="DeleteUnreferenced"/>, in the same savepoint (where collected blocks go first).</summary>
    public IReadOnlyList<SqlStatement> BeforeDeleteUnreferenced { get; init; } = [];

    /// <summary>Run with <c>@VolumeID</c> before <see cref="DeleteUnreferencedInVolume"/>, in the same savepoint.</summary>
    public IReadOnlyList<SqlStatement> BeforeDeleteUnreferencedInVolume { get; init; } = [];

    /// <summary>The collected block IDs' floor, or null when the file keeps none.</summary>
    public BlockDbSql.IdFloorSql? BlockIdFloor { get; init; }

    /// <summary>The deleted blockset IDs' floor, or null when the file keeps none.</summary>
    public BlockDbSql.IdFloorSql? BlocksetIdFloor { get; init; }
}
