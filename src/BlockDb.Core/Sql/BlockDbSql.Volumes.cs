using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>Remote volumes: registration, state, moves, the volume listing.</summary>
internal static partial class BlockDbSql
{
    /// <summary>Registers a volume and returns its ID.</summary>
    public static readonly SqlStatement InsertVolume = new(
        nameof(InsertVolume), """INSERT INTO "Remotevolume" ("Name", "State", "Size") VALUES (@Name, @State, NULL) RETURNING "ID" """, "@Name", "@State");

    /// <summary>A volume's ID by name; no row when none has it.</summary>
    public static readonly SqlStatement VolumeIdByName = new(
        nameof(VolumeIdByName), """SELECT "ID" FROM "Remotevolume" WHERE "Name" = @Name""", "@Name");

    /// <summary>A volume's state (a <see cref="VolumeState"/> name); no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetVolumeState = new(
        nameof(GetVolumeState), """SELECT "State" FROM "Remotevolume" WHERE "ID" = @ID""", "@ID");

    /// <summary>Sets a volume's state, and its size when one is given.</summary>
    public static readonly SqlStatement SetVolumeState = new(
        nameof(SetVolumeState), """UPDATE "Remotevolume" SET "State" = @State, "Size" = COALESCE(@Size, "Size") WHERE "ID" = @ID""", "@State", "@Size", "@ID");

    /// <summary>Whether a volume holds a block some blockset references (1 or 0).</summary>
    public static readonly SqlStatement VolumeHasReferencedBlocks = new(
        nameof(VolumeHasReferencedBlocks),
        """SELECT EXISTS (SELECT 1 FROM "Block" B WHERE B."VolumeID" = @ID AND EXISTS (SELECT 1 FROM "BlocksetEntry" E WHERE E."BlockID" = B."ID"))""",
        "@ID");

    /// <summary>Whether a volume holds any block (1 or 0).</summary>
    public static readonly SqlStatement VolumeHasBlocks = new(
        nameof(VolumeHasBlocks), """SELECT EXISTS (SELECT 1 FROM "Block" WHERE "VolumeID" = @ID)""", "@ID");

    /// <summary>Records a block in another volume; <c>changes()</c> is 0 when the block ID is unknown.</summary>
    public static readonly SqlStatement MoveBlock = new(
        nameof(MoveBlock), """UPDATE "Block" SET "VolumeID" = @To WHERE "ID" = @ID""", "@To", "@ID");

    /// <summary>A volume with its blocks and bytes, referenced or not; no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetVolume = new(
        nameof(GetVolume), $"""SELECT {VolumeColumns} FROM "Remotevolume" V WHERE V."ID" = @ID""", "@ID");

    /// <summary>Every volume as <see cref="GetVolume"/> gives it, in ID order.</summary>
    public static readonly SqlStatement EnumerateVolumes = new(
        nameof(EnumerateVolumes), $"""SELECT {VolumeColumns} FROM "Remotevolume" V ORDER BY V."ID" """);

    /// <summary>A volume <c>V</c>: ID, name, state, size, blocks, their bytes, unreferenced blocks, their bytes.</summary>
    private const string VolumeColumns =
        $"""V."ID", V."Name", V."State", V."Size", (SELECT COUNT(*) FROM "Block" B WHERE B."VolumeID" = V."ID"), (SELECT COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE B."VolumeID" = V."ID"), (SELECT COUNT(*) FROM "Block" B WHERE B."VolumeID" = V."ID" AND {Unreferenced}), (SELECT COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE B."VolumeID" = V."ID" AND {Unreferenced})""";
}
