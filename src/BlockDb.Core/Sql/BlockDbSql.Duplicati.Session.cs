using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>
/// What a session runs on a Duplicati database (docs/DUPLICATI-FACTS.md §2, §4.2-4.7, §6): Duplicati's columns, its
/// meaning of "referenced" (a <c>BlocksetEntry</c>, or a <c>BlocklistHash</c> naming the block's hash), collected blocks
/// kept in <c>DeletedBlock</c>, and only <c>Blocks</c> volumes visible. Every value is a parameter; <c>"Index"</c> is
/// always quoted.
/// </summary>
internal static partial class BlockDbSql
{
    /// <summary>
    /// A block <c>B</c> nothing references, by Duplicati's rule (<c>LocalDeleteDatabase.DropFilesetsFromTableAsync</c>,
    /// facts §6.1): no entry names it and no blocklist hash equals its hash (by hash only, as Duplicati compares). The
    /// <c>NOT IN</c> subquery is not correlated, so SQLite builds it once per statement.
    /// </summary>
    private const string DuplicatiUnreferenced =
        """NOT EXISTS (SELECT 1 FROM "BlocksetEntry" E WHERE E."BlockID" = B."ID") AND B."Hash" NOT IN (SELECT "Hash" FROM "BlocklistHash")""";

    /// <summary>The <c>DeletedBlock</c> row of (<c>@Hash</c>, <c>@Size</c>) a select-xor-insert takes back: see <see cref="DuplicatiFindDeletedBlock"/>.</summary>
    private const string DuplicatiTakeBackRow =
        """SELECT D."ID" FROM "DeletedBlock" D JOIN "Remotevolume" V ON V."ID" = D."VolumeID" WHERE D."Hash" = @Hash AND D."Size" = @Size AND V."Type" = 'Blocks' AND V."State" NOT IN ('Deleting', 'Deleted') ORDER BY D."ID" DESC LIMIT 1""";

    /// <summary>A Duplicati volume <c>V</c> as <see cref="Volumes.VolumeService.ReadVolume"/> reads it: its size −1 ("not known") as NULL.</summary>
    private const string DuplicatiVolumeColumns =
        $"""V."ID", V."Name", V."State", NULLIF(V."Size", -1), (SELECT COUNT(*) FROM "Block" B WHERE B."VolumeID" = V."ID"), (SELECT COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE B."VolumeID" = V."ID"), (SELECT COUNT(*) FROM "Block" B WHERE B."VolumeID" = V."ID" AND {DuplicatiUnreferenced}), (SELECT COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE B."VolumeID" = V."ID" AND {DuplicatiUnreferenced})""";

    /// <summary>Inserts a block into a volume (Duplicati's <c>AddBlockAsync</c> insert, LBD 245-258); its ID is the connection's last insert rowid, as Duplicati reads it.</summary>
    public static readonly SqlStatement DuplicatiInsertBlock = new(
        nameof(DuplicatiInsertBlock), """INSERT INTO "Block" ("Hash", "VolumeID", "Size") VALUES (@Hash, @VolumeID, @Size)""", "@Hash", "@VolumeID", "@Size");

    /// <summary>
    /// The <c>DeletedBlock</c> row a select-xor-insert takes back (facts §4.6, by Duplicati's intent: the largest ID of the
    /// (Hash, Size), from a Blocks volume that is not Deleting or Deleted and so still holds the bytes).
    /// </summary>
    public static readonly SqlStatement DuplicatiFindDeletedBlock = new(
        nameof(DuplicatiFindDeletedBlock),
        DuplicatiTakeBackRow,
        "@Hash", "@Size");

    /// <summary>
    /// After a miss, in one statement: the caller's volume's state (NULL when no Blocks volume has that ID, as
    /// <c>DuplicatiGetVolumeState</c> reads it) and the <c>DeletedBlock</c> row to take back (<see cref="DuplicatiFindDeletedBlock"/>'s, or NULL).
    /// </summary>
    public static readonly SqlStatement DuplicatiAfterMiss = new(
        nameof(DuplicatiAfterMiss),
        $"""SELECT (SELECT "State" FROM "Remotevolume" WHERE "ID" = @VolumeID AND "Type" = 'Blocks'), ({DuplicatiTakeBackRow})""",
        "@VolumeID", "@Hash", "@Size");

    /// <summary>Puts a <c>DeletedBlock</c> row back into <c>Block</c> with its volume (a new block ID, as Duplicati's move gives) and returns the ID.</summary>
    public static readonly SqlStatement DuplicatiTakeBackBlock = new(
        nameof(DuplicatiTakeBackBlock),
        """INSERT INTO "Block" ("Hash", "Size", "VolumeID") SELECT "Hash", "Size", "VolumeID" FROM "DeletedBlock" WHERE "ID" = @ID RETURNING "ID" """,
        "@ID");

    /// <summary>Deletes a <c>DeletedBlock</c> row taken back.</summary>
    public static readonly SqlStatement DuplicatiDropDeletedBlock = new(
        nameof(DuplicatiDropDeletedBlock), """DELETE FROM "DeletedBlock" WHERE "ID" = @ID""", "@ID");

    /// <summary>Names one blocklist of a blockset (Duplicati's <c>AddBlocksetAsync</c>, LBD 864-884).</summary>
    public static readonly SqlStatement DuplicatiInsertBlocklistHash = new(
        nameof(DuplicatiInsertBlocklistHash),
        """INSERT INTO "BlocklistHash" ("BlocksetID", "Index", "Hash") VALUES (@BlocksetID, @Index, @Hash)""",
        "@BlocksetID", "@Index", "@Hash");

    /// <summary>Whether a file and whether a metadata set names blockset <c>@ID</c> (1 or 0 each).</summary>
    public static readonly SqlStatement DuplicatiBlocksetNamed = new(
        nameof(DuplicatiBlocksetNamed),
        """SELECT EXISTS (SELECT 1 FROM "FileLookup" WHERE "BlocksetID" = @ID), EXISTS (SELECT 1 FROM "Metadataset" WHERE "BlocksetID" = @ID)""",
        "@ID");

    /// <summary>Deletes a blockset's blocklist hashes.</summary>
    public static readonly SqlStatement DuplicatiDeleteBlocklistHashes = new(
        nameof(DuplicatiDeleteBlocklistHashes), """DELETE FROM "BlocklistHash" WHERE "BlocksetID" = @ID""", "@ID");

    /// <summary>
    /// The shared services' statements on a Duplicati database (<see cref="Layouts.LayoutState.Sql"/>): no ID floors
    /// (BlockDb keeps nothing in the file). Built from this file's statements only: the parts of a partial class
    /// initialise in no set order.
    /// </summary>
    public static SessionSql DuplicatiSession { get; } = new()
    {
        InsertBlockset = new(
            // OR IGNORE: when the unique BlocksetFullHash holds (FullHash, Length) already, no row and no error; the blockset
            // rules then answer with the existing one (find-or-add in one statement on the path that adds). FullHash is
            // checked non-null before, and Blockset has no other constraint an IGNORE could hide.
            "DuplicatiInsertBlockset", """INSERT OR IGNORE INTO "Blockset" ("Length", "FullHash") VALUES (@Length, @FullHash)""", "@Length", "@FullHash"),

        // Recreate's −1 ("volume not known yet", facts §7) reads as no volume.
        GetBlock = new("DuplicatiGetBlock", """SELECT "Hash", "Size", NULLIF("VolumeID", -1) FROM "Block" WHERE "ID" = @ID""", "@ID"),
        EnumerateBlocks = new(
            "DuplicatiEnumerateBlocks",
            $"""SELECT B."ID", B."Hash", B."Size", NULLIF(B."VolumeID", -1) FROM "Block" B WHERE (@VolumeID IS NULL OR B."VolumeID" = @VolumeID) AND (@Unreferenced = 0 OR ({DuplicatiUnreferenced})) ORDER BY B."ID" """,
            "@VolumeID", "@Unreferenced"),

        // Only Blocks volumes hold blocks; Files and Index volumes are Duplicati's alone and invisible to BlockDb.
        GetVolumeState = new("DuplicatiGetVolumeState", """SELECT "State" FROM "Remotevolume" WHERE "ID" = @ID AND "Type" = 'Blocks'""", "@ID"),
        GetVolume = new("DuplicatiGetVolume", $"""SELECT {DuplicatiVolumeColumns} FROM "Remotevolume" V WHERE V."ID" = @ID AND V."Type" = 'Blocks'""", "@ID"),
        EnumerateVolumes = new("DuplicatiEnumerateVolumes", $"""SELECT {DuplicatiVolumeColumns} FROM "Remotevolume" V WHERE V."Type" = 'Blocks' ORDER BY V."ID" """),
        FindVolumeId = new("DuplicatiFindVolumeId", """SELECT "ID" FROM "Remotevolume" WHERE "Name" = @Name AND "Type" = 'Blocks'""", "@Name"),

        // Any type: Duplicati's RemotevolumeNameOnly keeps a name unique across Blocks, Files and Index volumes.
        VolumeNameTaken = new("DuplicatiVolumeNameTaken", """SELECT "ID" FROM "Remotevolume" WHERE "Name" = @Name""", "@Name"),

        // RegisterRemoteVolumeAsync's row (LD 1442-1504, facts §2): the latest operation (as a LocalDatabase opened
        // without an operation name takes it), Type Blocks, Size −1 (not known), Hash NULL, the counters and times 0.
        InsertVolume = new(
            "DuplicatiInsertVolume",
            """INSERT INTO "Remotevolume" ("OperationID", "Name", "Type", "Size", "Hash", "State", "VerificationCount", "DeleteGraceTime", "ArchiveTime", "LockExpirationTime") SELECT O."ID", @Name, 'Blocks', -1, NULL, @State, 0, 0, 0, 0 FROM "Operation" O ORDER BY O."ID" DESC LIMIT 1 RETURNING "ID" """,
            "@Name", "@State"),
        InsertVolumeRefused = "the Duplicati database has no Operation row, and Duplicati's Remotevolume.OperationID names the operation that registered the volume. Duplicati inserts one at the start of each run (a backup's 'Backup' row); register volumes inside that run (on its connection, UseCallerConnection) or after it",

        // UpdateRemoteVolumeAsync (LD 393-402, 656-689): the latest operation; Deleted starts Duplicati's 2-hour grace, in epoch seconds.
        SetVolumeState = new(
            "DuplicatiSetVolumeState",
            """UPDATE "Remotevolume" SET "State" = @State, "Size" = COALESCE(@Size, "Size"), "OperationID" = COALESCE((SELECT MAX("ID") FROM "Operation"), "OperationID"), "DeleteGraceTime" = CASE WHEN @State = 'Deleted' AND "State" <> 'Deleted' THEN CAST(strftime('%s', 'now') AS INTEGER) + 7200 ELSE "DeleteGraceTime" END WHERE "ID" = @ID AND "Type" = 'Blocks'""",
            "@State", "@Size", "@ID"),

        // RemoveRemoteVolumesAsync step 8 (facts §6.4) and PrepareForDeleteAsync's last step (§6.3): nothing may name a deleted volume's bytes.
        AfterVolumeDeleted =
        [
            new("DuplicatiDropVolumeDeletedBlocks", """DELETE FROM "DeletedBlock" WHERE "VolumeID" = @ID""", "@ID"),
            new("DuplicatiDropVolumeDuplicateBlocks", """DELETE FROM "DuplicateBlock" WHERE "VolumeID" = @ID""", "@ID"),
        ],
        VolumeHasReferencedBlocks = new(
            "DuplicatiVolumeHasReferencedBlocks",
            $"""SELECT EXISTS (SELECT 1 FROM "Block" B WHERE B."VolumeID" = @ID AND NOT ({DuplicatiUnreferenced}))""",
            "@ID"),

        // The block's primary copy is now in @To: a DuplicateBlock row saying "another copy is in @To" would name itself.
        AfterMove = [new("DuplicatiDropMovedDuplicate", """DELETE FROM "DuplicateBlock" WHERE "VolumeID" = @To AND "BlockID" = @ID""", "@To", "@ID")],

        UnreferencedByVolume = new(
            "DuplicatiUnreferencedByVolume",
            $"""SELECT NULLIF(B."VolumeID", -1), COUNT(*), COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE {DuplicatiUnreferenced} GROUP BY B."VolumeID" ORDER BY B."VolumeID" """),
        UnreferencedInVolume = new(
            "DuplicatiUnreferencedInVolume",
            $"""SELECT B."VolumeID", COUNT(*), COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE B."VolumeID" = @VolumeID AND {DuplicatiUnreferenced} GROUP BY B."VolumeID" """,
            "@VolumeID"),
        DeleteUnreferenced = new("DuplicatiDeleteUnreferenced", $"""DELETE FROM "Block" AS B WHERE {DuplicatiUnreferenced}"""),
        DeleteUnreferencedInVolume = new(
            "DuplicatiDeleteUnreferencedInVolume", $"""DELETE FROM "Block" AS B WHERE B."VolumeID" = @VolumeID AND {DuplicatiUnreferenced}""", "@VolumeID"),

        // Collected blocks go to DeletedBlock (facts §6.1 step 7; OR IGNORE: an identical row says the same), and their
        // DuplicateBlock rows go (Duplicati leaves them dangling, and a reused ID would inherit them).
        BeforeDeleteUnreferenced =
        [
            new("DuplicatiKeepCollected", $"""INSERT OR IGNORE INTO "DeletedBlock" ("Hash", "Size", "VolumeID") SELECT B."Hash", B."Size", B."VolumeID" FROM "Block" B WHERE {DuplicatiUnreferenced}"""),
            new("DuplicatiDropCollectedDuplicates", $"""DELETE FROM "DuplicateBlock" WHERE "BlockID" IN (SELECT B."ID" FROM "Block" B WHERE {DuplicatiUnreferenced})"""),
        ],
        BeforeDeleteUnreferencedInVolume =
        [
            new(
                "DuplicatiKeepCollectedInVolume",
                $"""INSERT OR IGNORE INTO "DeletedBlock" ("Hash", "Size", "VolumeID") SELECT B."Hash", B."Size", B."VolumeID" FROM "Block" B WHERE B."VolumeID" = @VolumeID AND {DuplicatiUnreferenced}""",
                "@VolumeID"),
            new(
                "DuplicatiDropCollectedDuplicatesInVolume",
                $"""DELETE FROM "DuplicateBlock" WHERE "BlockID" IN (SELECT B."ID" FROM "Block" B WHERE B."VolumeID" = @VolumeID AND {DuplicatiUnreferenced})""",
                "@VolumeID"),
        ],
    };
}
