using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>The KeyMap layout: its guards in the file, its catch-up read, its inserts at chosen IDs.</summary>
internal static partial class BlockDbSql
{
    /// <summary>
    /// The guards of a <see cref="BlockLayout.KeyMap"/> file (schema version 3), which make the file itself keep the
    /// key map's invariants whoever writes it, BlockDb or plain SQL:
    /// <list type="bullet">
    /// <item><c>BlockDbState</c>: one row holding <c>MaxBlockId</c>, the high-water mark of block IDs (BlockDb raises
    /// it in the same transaction as its inserts; an integer of 0 to 4,294,967,295), and <c>Generation</c>, a change
    /// counter (an integer of 0 to 2^62 − 1). Neither ever goes back; the row can be neither deleted nor inserted
    /// again (so <c>INSERT OR REPLACE</c> cannot rewind it).</item>
    /// <item><c>BlockDbGuardInsert</c>: a <c>Block</c> row with an ID outside 1 to 4,294,967,295, or whose hash is
    /// not a BLOB of 1 to 66 bytes, is refused (<c>SQLITE_CONSTRAINT_TRIGGER</c>); a row inserted at or below
    /// <c>MaxBlockId</c> (into a gap, or at an ID SQLite reused after a delete) bumps <c>Generation</c>.</item>
    /// <item><c>BlockDbGuardUpdate</c>: any update of a block's ID, hash or size bumps <c>Generation</c> (and the
    /// same values are refused).</item>
    /// </list>
    /// A key map that sees <c>Generation</c>, or the schema itself (<c>PRAGMA schema_version</c>, which any DDL
    /// moves), change reads the whole table again; rows above <c>MaxBlockId</c> are read by its catch-up. Deleting
    /// blocks needs no guard: a key map only proposes IDs and verifies each against its row.
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

    /// <summary>The names of the KeyMap guard triggers (<see cref="KeyMapGuards"/>) in name order, which a version-3 file must hold.</summary>
    public static readonly IReadOnlyList<string> KeyMapGuardTriggers = ["BlockDbGuardInsert", "BlockDbGuardUpdate", "BlockDbStateKeep", "BlockDbStateNoRewind", "BlockDbStateSingle"];

    /// <summary>The exact text of each guard trigger, in the order of <see cref="KeyMapGuardTriggers"/> (SQLite keeps it verbatim in <c>sqlite_schema</c>, so a changed guard is told by its text).</summary>
    public static readonly IReadOnlyList<string> KeyMapGuardTriggerSql = [GuardInsertSql, GuardUpdateSql, StateKeepSql, StateNoRewindSql, StateSingleSql];

    /// <summary>The guard triggers a file holds, as (name, SQL text) rows in name order, to compare with <see cref="KeyMapGuardTriggerSql"/>.</summary>
    public static readonly SqlStatement KeyMapGuardRows = new(
        nameof(KeyMapGuardRows),
        """SELECT "name", "sql" FROM sqlite_schema WHERE type = 'trigger' AND "name" IN ('BlockDbGuardInsert', 'BlockDbGuardUpdate', 'BlockDbStateKeep', 'BlockDbStateNoRewind', 'BlockDbStateSingle') ORDER BY "name" """);

    private const string GuardInsertSql =
        """CREATE TRIGGER "BlockDbGuardInsert" AFTER INSERT ON "Block" WHEN NEW."ID" NOT BETWEEN 1 AND 4294967295 OR typeof(NEW."Hash") <> 'blob' OR length(NEW."Hash") NOT BETWEEN 1 AND 66 OR NEW."ID" <= (SELECT "MaxBlockId" FROM "BlockDbState") BEGIN SELECT RAISE(ABORT, 'BlockDb KeyMap: Block.ID must be between 1 and 4294967295 and Block.Hash a BLOB of 1 to 66 bytes') WHERE NEW."ID" NOT BETWEEN 1 AND 4294967295 OR typeof(NEW."Hash") <> 'blob' OR length(NEW."Hash") NOT BETWEEN 1 AND 66; UPDATE "BlockDbState" SET "Generation" = "Generation" + 1; END""";

    private const string GuardUpdateSql =
        """CREATE TRIGGER "BlockDbGuardUpdate" AFTER UPDATE OF "ID", "Hash", "Size" ON "Block" BEGIN SELECT RAISE(ABORT, 'BlockDb KeyMap: Block.ID must be between 1 and 4294967295 and Block.Hash a BLOB of 1 to 66 bytes') WHERE NEW."ID" NOT BETWEEN 1 AND 4294967295 OR typeof(NEW."Hash") <> 'blob' OR length(NEW."Hash") NOT BETWEEN 1 AND 66; UPDATE "BlockDbState" SET "Generation" = "Generation" + 1; END""";

    private const string StateKeepSql =
        """CREATE TRIGGER "BlockDbStateKeep" BEFORE DELETE ON "BlockDbState" BEGIN SELECT RAISE(ABORT, 'BlockDb: the BlockDbState row is required by the KeyMap layout'); END""";

    private const string StateNoRewindSql =
        """CREATE TRIGGER "BlockDbStateNoRewind" BEFORE UPDATE ON "BlockDbState" WHEN NEW."MaxBlockId" < OLD."MaxBlockId" OR NEW."Generation" < OLD."Generation" OR NEW."Key" IS NOT OLD."Key" BEGIN SELECT RAISE(ABORT, 'BlockDb: BlockDbState.MaxBlockId and Generation never go back'); END""";

    private const string StateSingleSql =
        """CREATE TRIGGER "BlockDbStateSingle" BEFORE INSERT ON "BlockDbState" BEGIN SELECT RAISE(ABORT, 'BlockDb: the BlockDbState row is written once, by BlockDb (INSERT OR REPLACE would rewind it)'); END""";

    /// <summary>Bumps the KeyMap change counter, so every open key map reloads (after a repair renumbered blocks, or a guard was re-created).</summary>
    public const string BumpGeneration = """UPDATE "BlockDbState" SET "Generation" = "Generation" + 1""";

    /// <summary>
    /// The key map's catch-up read, one statement so it sees one snapshot: every block above <c>@After</c> in ID
    /// order (<c>ID, Hash, Size</c>), each with the state (<c>MaxBlockId, Generation, schema_version</c>); one row with
    /// NULL block columns when there is none; no row when the <c>BlockDbState</c> row is missing. (The state is joined
    /// from its table rather than selected as constants: Microsoft.Data.Sqlite 10 on SQLitePCLRaw 3.0.3 crashes
    /// reading a BLOB column of a compound select whose value is a constant.)
    /// </summary>
    public static readonly SqlStatement KeyMapCatchUp = new(
        nameof(KeyMapCatchUp),
        """SELECT S."MaxBlockId", S."Generation", V."schema_version", B."ID", B."Hash", B."Size" FROM "BlockDbState" S CROSS JOIN pragma_schema_version V LEFT JOIN "Block" B ON B."ID" > @After WHERE S."Key" = 1 ORDER BY B."ID" """,
        "@After");

    /// <summary>The number of blocks (the key map sizes its table from it before a full load).</summary>
    public static readonly SqlStatement CountBlocks = new(nameof(CountBlocks), """SELECT COUNT(*) FROM "Block" """);

    /// <summary>Inserts a block at an ID BlockDb chose (the KeyMap layout: above every ID in the file and above <c>MaxBlockId</c>).</summary>
    public static readonly SqlStatement InsertBlockWithId = new(
        nameof(InsertBlockWithId), """INSERT INTO "Block" ("ID", "Hash", "Size") VALUES (@ID, @Hash, @Size)""", "@ID", "@Hash", "@Size");

    /// <summary>Raises the KeyMap high-water mark to <c>@MaxBlockId</c> (never lowers it), in the transaction that inserted up to it.</summary>
    public static readonly SqlStatement RaiseMaxBlockId = new(
        nameof(RaiseMaxBlockId), """UPDATE "BlockDbState" SET "MaxBlockId" = @MaxBlockId WHERE "MaxBlockId" < @MaxBlockId""", "@MaxBlockId");

    /// <summary>A block's hash and size by ID (the key map verifies each hit with it); no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetBlockById = new(
        nameof(GetBlockById), """SELECT "Hash", "Size" FROM "Block" WHERE "ID" = @ID""", "@ID");
}
