using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>The lifecycle: remote volumes, garbage collection, and the enumerations.</summary>
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

    /// <summary>The unreferenced blocks and their bytes per volume (NULL: blocks recorded without one), in volume order.</summary>
    public static readonly SqlStatement UnreferencedByVolume = new(
        nameof(UnreferencedByVolume),
        $"""SELECT B."VolumeID", COUNT(*), COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE {Unreferenced} GROUP BY B."VolumeID" ORDER BY B."VolumeID" """);

    /// <summary>One volume's unreferenced blocks and their bytes.</summary>
    public static readonly SqlStatement UnreferencedInVolume = new(
        nameof(UnreferencedInVolume),
        $"""SELECT B."VolumeID", COUNT(*), COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE B."VolumeID" = @VolumeID AND {Unreferenced} GROUP BY B."VolumeID" """,
        "@VolumeID");

    /// <summary>Deletes every block no blockset references.</summary>
    public static readonly SqlStatement DeleteUnreferenced = new(
        nameof(DeleteUnreferenced), $"""DELETE FROM "Block" AS B WHERE {Unreferenced}""");

    /// <summary>Deletes one volume's blocks that no blockset references.</summary>
    public static readonly SqlStatement DeleteUnreferencedInVolume = new(
        nameof(DeleteUnreferencedInVolume), $"""DELETE FROM "Block" AS B WHERE B."VolumeID" = @VolumeID AND {Unreferenced}""", "@VolumeID");

    /// <summary>The highest block ID in the file, 0 when it has none.</summary>
    public static readonly SqlStatement HighestBlockId = new(
        nameof(HighestBlockId), """SELECT COALESCE(MAX("ID"), 0) FROM "Block" """);

    /// <summary>
    /// Raises the collected high-water mark (the <see cref="BlockIdFloorSetting"/> row) to <c>@Floor</c>, never lowers
    /// it: a garbage collection that deleted the block with the highest ID records that ID here.
    /// </summary>
    public static readonly SqlStatement RaiseBlockIdFloor = new(
        nameof(RaiseBlockIdFloor),
        $"""INSERT INTO "BlockDbSettings" ("Name", "Value") VALUES ('{BlockIdFloorSetting}', @Floor) ON CONFLICT ("Name") DO UPDATE SET "Value" = excluded."Value" WHERE CAST(excluded."Value" AS INTEGER) > CAST("Value" AS INTEGER)""",
        "@Floor");

    /// <summary>
    /// The collected high-water mark when it is above every block ID in the file (no row otherwise): SQLite would hand
    /// out the IDs up to it again (a table without <c>AUTOINCREMENT</c> takes the highest ID + 1,
    /// <see href="https://www.sqlite.org/autoinc.html"/>), so the next insert takes it + 1 explicitly.
    /// </summary>
    public static readonly SqlStatement BlockIdFloorAboveMax = new(
        nameof(BlockIdFloorAboveMax),
        $"""SELECT CAST("Value" AS INTEGER) FROM "BlockDbSettings" WHERE "Name" = '{BlockIdFloorSetting}' AND CAST("Value" AS INTEGER) > (SELECT COALESCE(MAX("ID"), 0) FROM "Block")""");

    /// <summary>Blocks in ID order, optionally of one volume (<c>@VolumeID</c> not NULL) and optionally only unreferenced ones (<c>@Unreferenced</c> = 1).</summary>
    public static readonly SqlStatement EnumerateBlocks = new(
        nameof(EnumerateBlocks),
        $"""SELECT B."ID", B."Hash", B."Size", B."VolumeID" FROM "Block" B WHERE (@VolumeID IS NULL OR B."VolumeID" = @VolumeID) AND (@Unreferenced = 0 OR {Unreferenced}) ORDER BY B."ID" """,
        "@VolumeID", "@Unreferenced");

    /// <summary>Every blockset with its length, full hash and entry count, in ID order.</summary>
    public static readonly SqlStatement EnumerateBlocksets = new(
        nameof(EnumerateBlocksets),
        """SELECT S."ID", S."Length", S."FullHash", (SELECT COUNT(*) FROM "BlocksetEntry" E WHERE E."BlocksetID" = S."ID") FROM "Blockset" S ORDER BY S."ID" """);

    /// <summary>The check: blocks recorded in a volume that does not exist or is deleted.</summary>
    public static readonly SqlStatement CheckVolumeProblems = new(
        nameof(CheckVolumeProblems),
        """SELECT B."ID" FROM "Block" B WHERE B."VolumeID" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "Remotevolume" V WHERE V."ID" = B."VolumeID" AND V."State" <> 'Deleted') ORDER BY B."ID" """);

    /// <summary>The <c>BlockDbSettings</c> row holding the highest block ID a garbage collection deleted (see <see cref="RaiseBlockIdFloor"/>).</summary>
    public const string BlockIdFloorSetting = "CollectedBlockIdFloor";

    /// <summary>A block <c>B</c> that no blockset entry names.</summary>
    private const string Unreferenced = """NOT EXISTS (SELECT 1 FROM "BlocksetEntry" E WHERE E."BlockID" = B."ID")""";

    /// <summary>A volume <c>V</c>: ID, name, state, size, blocks, their bytes, unreferenced blocks, their bytes.</summary>
    private const string VolumeColumns =
        $"""V."ID", V."Name", V."State", V."Size", (SELECT COUNT(*) FROM "Block" B WHERE B."VolumeID" = V."ID"), (SELECT COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE B."VolumeID" = V."ID"), (SELECT COUNT(*) FROM "Block" B WHERE B."VolumeID" = V."ID" AND {Unreferenced}), (SELECT COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE B."VolumeID" = V."ID" AND {Unreferenced})""";
}
