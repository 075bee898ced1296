using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>The KeyMap layout: its guards in the file, its catch-up read, its inserts at chosen IDs.</summary>
internal static partial class BlockDbSql
{
    /// <summary>
    /// The guards of a <see cref="BlockLayout.KeyMap"/> file, which make the file keep the key map's invariants whoever
    /// writes it (docs/ARCHITECTURE.md, "The key map"): the one <c>BlockDbState</c> row (<c>MaxBlockId</c>,
    /// <c>Generation</c>) that never goes back [F2]; <c>BlockDbGuardInsert</c> and <c>BlockDbGuardUpdate</c>, which refuse
    /// IDs, hashes and sizes out of range [F1] and bump <c>Generation</c> for any other change, checking that the bump
    /// happened [F3]. No other trigger is allowed in the file (<see cref="KeyMapTriggerRows"/>) [F4].
    /// </summary>
    public static readonly IReadOnlyList<string> KeyMapGuards =
    [
        """DROP TRIGGER IF EXISTS "BlockDbStateNoRewind" """,
        """DROP TRIGGER IF EXISTS "BlockDbStateKeep" """,
        """DROP TRIGGER IF EXISTS "BlockDbStateSingle" """,
        """DROP TRIGGER IF EXISTS "BlockDbGuardInsert" """,
        """DROP TRIGGER IF EXISTS "BlockDbGuardUpdate" """,
        """CREATE TABLE IF NOT EXISTS "BlockDbState" ("Key" INTEGER PRIMARY KEY CHECK ("Key" = 1), "MaxBlockId" INTEGER NOT NULL CHECK (typeof("MaxBlockId") = 'integer' AND "MaxBlockId" BETWEEN 0 AND 4294967295), "Generation" INTEGER NOT NULL CHECK (typeof("Generation") = 'integer' AND "Generation" BETWEEN 0 AND 4611686018427387903))""",
        """INSERT OR IGNORE INTO "BlockDbState" ("Key", "MaxBlockId", "Generation") VALUES (1, (SELECT COALESCE(MAX("ID"), 0) FROM "Block" WHERE "ID" BETWEEN 1 AND 4294967295), 0)""",
        GuardInsertSql,
        GuardUpdateSql,
        StateKeepSql,
        StateNoRewindSql,
        StateSingleSql,
    ];

    /// <summary>The names of the KeyMap guard triggers (<see cref="KeyMapGuards"/>) in name order: the only triggers a KeyMap file holds.</summary>
    public static readonly IReadOnlyList<string> KeyMapGuardTriggers = ["BlockDbGuardInsert", "BlockDbGuardUpdate", "BlockDbStateKeep", "BlockDbStateNoRewind", "BlockDbStateSingle"];

    /// <summary>The exact text of each guard trigger, in the order of <see cref="KeyMapGuardTriggers"/> (SQLite keeps it verbatim in <c>sqlite_schema</c>, so a changed guard is told by its text).</summary>
    public static readonly IReadOnlyList<string> KeyMapGuardTriggerSql = [GuardInsertSql, GuardUpdateSql, StateKeepSql, StateNoRewindSql, StateSingleSql];

    /// <summary>Every trigger of the main schema, as (name, SQL text) rows in name order, to compare with <see cref="KeyMapGuardTriggerSql"/>.</summary>
    public static readonly SqlStatement KeyMapTriggerRows = new(
        nameof(KeyMapTriggerRows),
        """SELECT "name", "sql" FROM main.sqlite_schema WHERE type = 'trigger' ORDER BY "name" """);

    /// <summary>A block row the KeyMap layout refuses: its ID, hash or size out of range or of another type (on <c>NEW</c>).</summary>
    private const string BadRow =
        """NEW."ID" NOT BETWEEN 1 AND 4294967295 OR typeof(NEW."Hash") <> 'blob' OR length(NEW."Hash") NOT BETWEEN 1 AND 66 OR typeof(NEW."Size") <> 'integer' OR NEW."Size" < 1""";

    /// <summary>The body every block guard ends with: refuse a bad row, bump the generation, and fail when the bump was cancelled.</summary>
    private const string GuardBody =
        $"""BEGIN SELECT RAISE(ABORT, 'BlockDb KeyMap: Block.ID must be between 1 and 4294967295, Block.Hash a BLOB of 1 to 66 bytes and Block.Size an integer of 1 or more') WHERE {BadRow}; UPDATE "BlockDbState" SET "Generation" = "Generation" + 1; SELECT RAISE(ABORT, 'BlockDb KeyMap: the change counter did not move (a trigger outside BlockDb cancelled it), so this write is refused') WHERE changes() <> 1; END""";

    private const string GuardInsertSql =
        $"""CREATE TRIGGER "BlockDbGuardInsert" AFTER INSERT ON "Block" WHEN {BadRow} OR NEW."ID" <= (SELECT "MaxBlockId" FROM "BlockDbState") {GuardBody}""";

    private const string GuardUpdateSql =
        $"""CREATE TRIGGER "BlockDbGuardUpdate" AFTER UPDATE ON "Block" WHEN OLD."ID" IS NOT NEW."ID" OR OLD."Hash" IS NOT NEW."Hash" OR OLD."Size" IS NOT NEW."Size" {GuardBody}""";

    private const string StateKeepSql =
        """CREATE TRIGGER "BlockDbStateKeep" BEFORE DELETE ON "BlockDbState" BEGIN SELECT RAISE(ABORT, 'BlockDb: the BlockDbState row is required by the KeyMap layout'); END""";

    private const string StateNoRewindSql =
        """CREATE TRIGGER "BlockDbStateNoRewind" BEFORE UPDATE ON "BlockDbState" WHEN NEW."MaxBlockId" < OLD."MaxBlockId" OR NEW."Generation" < OLD."Generation" OR NEW."Key" IS NOT OLD."Key" OR typeof(NEW."MaxBlockId") <> 'integer' OR NEW."MaxBlockId" NOT BETWEEN 0 AND 4294967295 OR typeof(NEW."Generation") <> 'integer' OR NEW."Generation" NOT BETWEEN 0 AND 4611686018427387903 BEGIN SELECT RAISE(ABORT, 'BlockDb: BlockDbState.MaxBlockId and Generation never go back and stay integers in their ranges'); END""";

    private const string StateSingleSql =
        """CREATE TRIGGER "BlockDbStateSingle" BEFORE INSERT ON "BlockDbState" BEGIN SELECT RAISE(ABORT, 'BlockDb: the BlockDbState row is written once, by BlockDb (INSERT OR REPLACE would rewind it)'); END""";

    /// <summary>
    /// Lifts the insert guard inside a bulk import's write transaction, after its catch-up (docs/ARCHITECTURE.md, M6):
    /// the rows the import inserts are above <c>MaxBlockId</c> and in range by construction, so the guard would only
    /// evaluate its condition per row. <see cref="RestoreGuardInsert"/> puts it back before the <c>COMMIT</c>.
    /// </summary>
    public const string LiftGuardInsert = """DROP TRIGGER IF EXISTS "BlockDbGuardInsert" """;

    /// <summary>The insert guard with its exact text, re-created before a bulk import's <c>COMMIT</c> (after <see cref="LiftGuardInsert"/>).</summary>
    public const string RestoreGuardInsert = GuardInsertSql;

    /// <summary>Bumps the KeyMap change counter, so every open key map reloads (after a repair renumbered blocks, or a guard was re-created).</summary>
    public const string BumpGeneration = """UPDATE "BlockDbState" SET "Generation" = "Generation" + 1""";

    /// <summary>
    /// The key map's catch-up read, one statement so it sees one snapshot: every block above <c>@After</c> in ID
    /// order (<c>ID, Hash, Size</c>), each with the state (<c>MaxBlockId, Generation, schema_version</c>); one row with
    /// NULL block columns when there is none; no row when the <c>BlockDbState</c> row is missing. (The state is joined
    /// from its table rather than selected as constants: Microsoft.Data.Sqlite 10 on SQLitePCLRaw 3.0.3 crashes
    /// reading a BLOB column of a compound select whose value is a constant.)
    /// </summary>
    /// <remarks>
    /// The schema version is a scalar subquery, not a join: with <c>pragma_schema_version</c> in the join, SQLite
    /// cannot tell that the outer loop yields one row, so it sorted every block in a temporary B-tree for the
    /// <c>ORDER BY</c> (<c>USE TEMP B-TREE FOR ORDER BY</c>; about half of a whole-table load's time in SQLite). With
    /// only the state row (a primary-key lookup, one row) outside, the rowid range scan already gives ID order. The
    /// subquery runs once per execution, in the statement's own snapshot, so the state, the version and the rows
    /// still come from one snapshot. <c>KeyMapScanTests</c> checks the plan.
    /// </remarks>
    public static readonly SqlStatement KeyMapCatchUp = new(
        nameof(KeyMapCatchUp),
        """SELECT S."MaxBlockId", S."Generation", (SELECT "schema_version" FROM pragma_schema_version), B."ID", B."Hash", B."Size" FROM "BlockDbState" S LEFT JOIN "Block" B ON B."ID" > @After WHERE S."Key" = 1 ORDER BY B."ID" """,
        "@After");

    /// <summary>The number of blocks (the key map sizes its table from it before a full load).</summary>
    public static readonly SqlStatement CountBlocks = new(nameof(CountBlocks), """SELECT COUNT(*) FROM "Block" """);

    /// <summary>Inserts a block at an ID BlockDb chose (the KeyMap layout: above every ID in the file and above <c>MaxBlockId</c>).</summary>
    public static readonly SqlStatement InsertBlockWithId = new(
        nameof(InsertBlockWithId), """INSERT INTO "Block" ("ID", "Hash", "Size", "VolumeID") VALUES (@ID, @Hash, @Size, @VolumeID)""", "@ID", "@Hash", "@Size", "@VolumeID");

    /// <summary>Raises the KeyMap high-water mark to <c>@MaxBlockId</c> (never lowers it), in the transaction that inserted up to it.</summary>
    public static readonly SqlStatement RaiseMaxBlockId = new(
        nameof(RaiseMaxBlockId), """UPDATE "BlockDbState" SET "MaxBlockId" = @MaxBlockId WHERE "MaxBlockId" < @MaxBlockId""", "@MaxBlockId");

    /// <summary>
    /// One row when the row at <c>@ID</c> holds the hash <c>@Hash</c> (a BLOB) and the size <c>@Size</c> (an integer),
    /// none otherwise: the key map verifies each hit with it [M1]. SQLite compares the stored values with the bound ones,
    /// so no hash is read back: a stored TEXT, number or NULL never equals a BLOB, whatever the column declares. The size
    /// keeps its <c>typeof()</c>: SQLite compares a REAL with an INTEGER by value, and BlockDb does not check the declared
    /// types of a file's <c>Block</c> table, so where <c>Size</c> has no INTEGER affinity (a table rebuilt by another tool)
    /// a stored REAL 10.0 would equal 10 (<c>KeyMapVerifyAffinityTests</c>).
    /// </summary>
    public static readonly SqlStatement VerifyBlockId = new(
        nameof(VerifyBlockId), """SELECT 1 FROM "Block" WHERE "ID" = @ID AND "Hash" = @Hash AND "Size" = @Size AND typeof("Size") = 'integer'""", "@ID", "@Hash", "@Size");

    /// <summary>
    /// <see cref="VerifyBlockId"/> giving the row's <c>VolumeID</c> as its column: the verification read of a one-call
    /// file's block, which then needs no second read of the row for its volume (a column the plain lookup does not pay).
    /// </summary>
    public static readonly SqlStatement VerifyBlockIdWithVolume = new(
        nameof(VerifyBlockIdWithVolume), """SELECT "VolumeID" FROM "Block" WHERE "ID" = @ID AND "Hash" = @Hash AND "Size" = @Size AND typeof("Size") = 'integer'""", "@ID", "@Hash", "@Size");

    /// <summary>IDs per <see cref="GetBlocksByIdWithVolume"/>: a one-call file's map hits are verified this many to a statement.</summary>
    public const int VerifiedPerRead = 16;

    /// <summary>
    /// <see cref="VerifyBlockIdWithVolume"/> for up to <see cref="VerifiedPerRead"/> candidates at once (<c>@ID0</c>,
    /// <c>@Hash0</c>, <c>@Size0</c> to <c>@ID15</c>, <c>@Hash15</c>, <c>@Size15</c>; a NULL ID for none): a row, led by
    /// the candidate's place in the list, for each whose row holds its hash and size. A one-call file's map candidates
    /// verified [M1] by one statement instead of one each; one seek by rowid per candidate (<c>UNION ALL</c>: an
    /// <c>IN</c> list would first sort the IDs into an ephemeral table, which cost about what the 15 saved statements
    /// did on PInvoke).
    /// </summary>
    public static readonly SqlStatement GetBlocksByIdWithVolume = new(
        nameof(GetBlocksByIdWithVolume),
        string.Join(" UNION ALL ", Enumerable.Range(0, VerifiedPerRead).Select(i =>
            $"""SELECT {i}, "VolumeID" FROM "Block" WHERE "ID" = @ID{i} AND "Hash" = @Hash{i} AND "Size" = @Size{i} AND typeof("Size") = 'integer'""")),
        [.. Enumerable.Range(0, VerifiedPerRead).SelectMany(i => new[] { $"@ID{i}", $"@Hash{i}", $"@Size{i}" })]);

    /// <summary>The <c>BlockDbSettings</c> row holding the file's identity: a random GUID written once, by the first key-map snapshot written for the file.</summary>
    public const string FileIdSetting = "FileId";

    /// <summary>The <c>BlockDbSettings</c> row holding the key map's secret key seed (<c>KeyHasher</c>), written once together with <see cref="FileIdSetting"/>.</summary>
    public const string KeyMapSeedSetting = "KeyMapSeed";

    /// <summary>The <c>BlockDbSettings</c> row holding the token of the last key-map snapshot written: a new random GUID committed before each write.</summary>
    public const string KeyMapSnapshotTokenSetting = "KeyMapSnapshotToken";

    /// <summary>The three settings a key-map snapshot is checked against, as (name, value) rows.</summary>
    public static readonly SqlStatement ReadSnapshotIdentity = new(
        nameof(ReadSnapshotIdentity),
        $"""SELECT "Name", "Value" FROM "BlockDbSettings" WHERE "Name" IN ('{FileIdSetting}', '{KeyMapSeedSetting}', '{KeyMapSnapshotTokenSetting}')""");

    /// <summary>The KeyMap state as one row: <c>MaxBlockId</c>, <c>Generation</c>, <c>schema_version</c> (no row without the state row).</summary>
    public static readonly SqlStatement ReadKeyMapState = new(
        nameof(ReadKeyMapState),
        """SELECT "MaxBlockId", "Generation", (SELECT "schema_version" FROM pragma_schema_version) FROM "BlockDbState" WHERE "Key" = 1""");

    /// <summary>The highest block at or below <c>@Through</c> whose hash and size a lookup can match: <c>ID, Hash, Size</c> (a key-map snapshot's anchor row).</summary>
    public static readonly SqlStatement KeyMapSnapshotAnchor = new(
        nameof(KeyMapSnapshotAnchor),
        """SELECT "ID", "Hash", "Size" FROM "Block" WHERE "ID" <= @Through AND typeof("Hash") = 'blob' AND typeof("Size") = 'integer' ORDER BY "ID" DESC LIMIT 1""",
        "@Through");
}
