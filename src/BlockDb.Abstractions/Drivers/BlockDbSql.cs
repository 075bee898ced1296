namespace BlockDb.Drivers;

/// <summary>
/// Every SQL statement BlockDb runs, in one place. All values are bound as parameters; no SQL is built
/// from caller strings. Table and column names follow Duplicati's schema (<c>../shared/BRIEF.md</c>).
/// </summary>
public static class BlockDbSql
{
    /// <summary>
    /// The newest schema format version this build writes and reads, stored in <c>PRAGMA user_version</c>:
    /// 1 is the <see cref="BlockLayout.TextHash"/> layout (no settings table); 2 is <see cref="BlockLayout.BlobHash"/>
    /// (and, in files written before version 3 existed, <see cref="BlockLayout.KeyMap"/> without its guards); 3 is
    /// <see cref="BlockLayout.KeyMap"/> with the <c>BlockDbState</c> table and the guard triggers
    /// (<see cref="KeyMapGuards"/>). Files of versions 2 and 3 carry a <c>BlockDbSettings</c> table whose
    /// <c>BlockLayout</c> row names their layout. A version-2 KeyMap file is upgraded to 3 in place when opened
    /// for writing; builds that know only versions 1 and 2 refuse version-3 files as written by a newer BlockDb.
    /// </summary>
    public const int SchemaVersion = 3;

    /// <summary>The schema version of <see cref="BlockLayout.TextHash"/> files (kept at 1 so older builds still open them).</summary>
    public const int TextHashSchemaVersion = 1;

    /// <summary>The schema version of <see cref="BlockLayout.BlobHash"/> files, and of KeyMap files written before the guards existed.</summary>
    public const int BlobHashSchemaVersion = 2;

    /// <summary>The highest block ID the <see cref="BlockLayout.KeyMap"/> layout holds: 4,294,967,295 (2^32 − 1; its map stores 32-bit IDs).</summary>
    public const long KeyMapMaxBlockId = uint.MaxValue;

    /// <summary>The <c>BlockDbSettings</c> row that names a version-2 file's layout (a <see cref="BlockLayout"/> name).</summary>
    public const string LayoutSetting = "BlockLayout";

    /// <summary>
    /// The value BlockDb stores in <c>PRAGMA application_id</c> (ASCII <c>BlkD</c>), so a BlockDb file can be
    /// told from other SQLite files (<see href="https://www.sqlite.org/pragma.html#pragma_application_id"/>).
    /// </summary>
    public const int ApplicationId = 0x426C6B44;

    /// <summary>
    /// The schema, version 1: <c>Block</c> (hash + size → ID, unique on both), <c>Blockset</c> (a file's
    /// content: <c>Length</c> in bytes, optional <c>FullHash</c>) and <c>BlocksetEntry</c> (the blockset's
    /// blocks in <c>Index</c> order, a <c>WITHOUT ROWID</c> table keyed by blockset and index).
    /// Duplicati's <c>VolumeID</c> column is left out: BlockDb indexes blocks, not remote volumes.
    /// </summary>
    public static readonly IReadOnlyList<string> SchemaV1 =
    [
        """CREATE TABLE "Block" ("ID" INTEGER PRIMARY KEY, "Hash" TEXT NOT NULL, "Size" INTEGER NOT NULL)""",
        """CREATE UNIQUE INDEX "BlockHashSize" ON "Block" ("Hash", "Size")""",
        """CREATE TABLE "Blockset" ("ID" INTEGER PRIMARY KEY, "Length" INTEGER NOT NULL, "FullHash" TEXT NULL)""",
        """CREATE INDEX "BlocksetFullHash" ON "Blockset" ("FullHash", "Length")""",
        """CREATE TABLE "BlocksetEntry" ("BlocksetID" INTEGER NOT NULL, "Index" INTEGER NOT NULL, "BlockID" INTEGER NOT NULL, CONSTRAINT "BlocksetEntry_PK_IdIndex" PRIMARY KEY ("BlocksetID", "Index")) WITHOUT ROWID""",
        """CREATE INDEX "BlocksetEntry_IndexIdsBackwards" ON "BlocksetEntry" ("BlockID")""",
    ];

    /// <summary>
    /// The schema of a new file with <paramref name="layout"/>: <see cref="SchemaV1"/> for
    /// <see cref="BlockLayout.TextHash"/>; otherwise version 1's tables with <c>Hash</c> as a BLOB, the hash index only
    /// for <see cref="BlockLayout.BlobHash"/>, the <c>BlockDbSettings</c> table, and for <see cref="BlockLayout.KeyMap"/>
    /// the <see cref="KeyMapGuards"/>.
    /// </summary>
    /// <param name="layout">The layout.</param>
    /// <returns>The DDL statements, in order.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="layout"/> is not a defined layout.</exception>
    public static IReadOnlyList<string> Schema(BlockLayout layout)
    {
        switch (layout)
        {
            case BlockLayout.TextHash:
                return SchemaV1;
            case BlockLayout.BlobHash:
            case BlockLayout.KeyMap:
                List<string> ddl = ["""CREATE TABLE "Block" ("ID" INTEGER PRIMARY KEY, "Hash" BLOB NOT NULL, "Size" INTEGER NOT NULL)"""];
                if (layout == BlockLayout.BlobHash)
                {
                    ddl.Add(SchemaV1[1]);
                }

                ddl.AddRange(SchemaV1.Skip(2));
                ddl.Add("""CREATE TABLE "BlockDbSettings" ("Name" TEXT NOT NULL PRIMARY KEY, "Value" TEXT NOT NULL) WITHOUT ROWID""");
                if (layout == BlockLayout.KeyMap)
                {
                    ddl.AddRange(KeyMapGuards);
                }

                return ddl;
            default:
                throw new ArgumentOutOfRangeException(nameof(layout), layout, "Unknown block layout.");
        }
    }

    /// <summary>The schema version a new file with <paramref name="layout"/> gets: 1 (TextHash), 2 (BlobHash) or 3 (KeyMap).</summary>
    /// <param name="layout">The layout.</param>
    /// <returns>The <c>user_version</c> value.</returns>
    public static int SchemaVersionOf(BlockLayout layout) => layout switch
    {
        BlockLayout.TextHash => TextHashSchemaVersion,
        BlockLayout.BlobHash => BlobHashSchemaVersion,
        _ => SchemaVersion,
    };

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

    /// <summary>Reads one row of a version-2 file's settings table; no row when the setting is absent.</summary>
    public static readonly SqlStatement ReadSetting = new(
        nameof(ReadSetting), """SELECT "Value" FROM "BlockDbSettings" WHERE "Name" = @Name""", "@Name");

    /// <summary>Writes one row of a version-2 file's settings table (once, when the file is created).</summary>
    public static readonly SqlStatement WriteSetting = new(
        nameof(WriteSetting), """INSERT INTO "BlockDbSettings" ("Name", "Value") VALUES (@Name, @Value)""", "@Name", "@Value");

    /// <summary>A block's hash and size by ID (the key map verifies each hit with it); no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetBlockById = new(
        nameof(GetBlockById), """SELECT "Hash", "Size" FROM "Block" WHERE "ID" = @ID""", "@ID");

    /// <summary>Find a block's ID by hash and size (Duplicati's lookup).</summary>
    public static readonly SqlStatement FindBlock = new(
        nameof(FindBlock), """SELECT "ID" FROM "Block" WHERE "Hash" = @Hash AND "Size" = @Size""", "@Hash", "@Size");

    /// <summary>Insert a block and return its ID; fails with <c>SQLITE_CONSTRAINT</c> when it exists.</summary>
    public static readonly SqlStatement InsertBlock = new(
        nameof(InsertBlock), """INSERT INTO "Block" ("Hash", "Size") VALUES (@Hash, @Size) RETURNING "ID" """, "@Hash", "@Size");

    /// <summary>Insert a block unless it exists (the seed's xor2, first half); <c>changes()</c> tells which.</summary>
    public static readonly SqlStatement InsertBlockOrIgnore = new(
        nameof(InsertBlockOrIgnore), """INSERT OR IGNORE INTO "Block" ("Hash", "Size") VALUES (@Hash, @Size)""", "@Hash", "@Size");

    /// <summary>Insert a block and return its ID, or return no row when it exists (upsert with <c>RETURNING</c>).</summary>
    public static readonly SqlStatement InsertBlockReturningUnlessExists = new(
        nameof(InsertBlockReturningUnlessExists),
        """INSERT INTO "Block" ("Hash", "Size") VALUES (@Hash, @Size) ON CONFLICT ("Hash", "Size") DO NOTHING RETURNING "ID" """,
        "@Hash", "@Size");

    /// <summary>A block's size by ID; no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetBlockSize = new(
        nameof(GetBlockSize), """SELECT "Size" FROM "Block" WHERE "ID" = @ID""", "@ID");

    /// <summary>Insert a blockset and return its ID.</summary>
    public static readonly SqlStatement InsertBlockset = new(
        nameof(InsertBlockset), """INSERT INTO "Blockset" ("Length", "FullHash") VALUES (@Length, @FullHash) RETURNING "ID" """, "@Length", "@FullHash");

    /// <summary>Insert one blockset entry.</summary>
    public static readonly SqlStatement InsertBlocksetEntry = new(
        nameof(InsertBlocksetEntry),
        """INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") VALUES (@BlocksetID, @Index, @BlockID)""",
        "@BlocksetID", "@Index", "@BlockID");

    /// <summary>A blockset's length, full hash and entry count; no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetBlockset = new(
        nameof(GetBlockset),
        """SELECT "Length", "FullHash", (SELECT COUNT(*) FROM "BlocksetEntry" WHERE "BlocksetID" = @ID) FROM "Blockset" WHERE "ID" = @ID""",
        "@ID");

    /// <summary>A blockset's blocks in order: the join of <c>BlocksetEntry</c> and <c>Block</c>.</summary>
    public static readonly SqlStatement ListBlocksetBlocks = new(
        nameof(ListBlocksetBlocks),
        """SELECT E."Index", B."ID", B."Hash", B."Size" FROM "BlocksetEntry" E JOIN "Block" B ON B."ID" = E."BlockID" WHERE E."BlocksetID" = @BlocksetID ORDER BY E."Index" """,
        "@BlocksetID");

    /// <summary>Row counts of the three tables.</summary>
    public static readonly SqlStatement Counts = new(
        nameof(Counts),
        """SELECT (SELECT COUNT(*) FROM "Block"), (SELECT COUNT(*) FROM "Blockset"), (SELECT COUNT(*) FROM "BlocksetEntry")""");

    /// <summary>Starts a read transaction: the first read takes a snapshot that the following reads share, and no write lock is taken.</summary>
    public const string BeginRead = "BEGIN DEFERRED";

    /// <summary>Starts a write transaction, taking the write lock at once so it cannot fail to upgrade later.</summary>
    public static readonly SqlStatement Begin = new(nameof(Begin), "BEGIN IMMEDIATE");

    /// <summary>Commits the open transaction.</summary>
    public static readonly SqlStatement Commit = new(nameof(Commit), "COMMIT");

    /// <summary>Rolls the open transaction back.</summary>
    public static readonly SqlStatement Rollback = new(nameof(Rollback), "ROLLBACK");

    /// <summary>Marks the start of one blockset's writes inside the open transaction.</summary>
    public static readonly SqlStatement Savepoint = new(nameof(Savepoint), """SAVEPOINT "BlockDbOp" """);

    /// <summary>Keeps the writes since <see cref="Savepoint"/> (they commit with the transaction).</summary>
    public static readonly SqlStatement ReleaseSavepoint = new(nameof(ReleaseSavepoint), """RELEASE "BlockDbOp" """);

    /// <summary>Undoes the writes since <see cref="Savepoint"/>, keeping earlier writes of the transaction.</summary>
    public static readonly SqlStatement RollbackToSavepoint = new(nameof(RollbackToSavepoint), """ROLLBACK TO "BlockDbOp" """);

    /// <summary>The check: duplicate (Hash, Size) groups and the rows beyond the first of each.</summary>
    public static readonly SqlStatement CheckDuplicateCounts = new(
        nameof(CheckDuplicateCounts),
        """SELECT COUNT(*), COALESCE(SUM("N") - COUNT(*), 0) FROM (SELECT COUNT(*) AS "N" FROM "Block" GROUP BY "Hash", "Size" HAVING COUNT(*) > 1)""");

    /// <summary>The check and the repair: each duplicate row with the lowest ID of its (Hash, Size) group, which a repair keeps.</summary>
    public static readonly SqlStatement CheckDuplicateRows = new(
        nameof(CheckDuplicateRows),
        """SELECT B."ID", K."Keep" FROM "Block" B JOIN (SELECT "Hash", "Size", MIN("ID") AS "Keep" FROM "Block" GROUP BY "Hash", "Size" HAVING COUNT(*) > 1) K ON B."Hash" = K."Hash" AND B."Size" = K."Size" AND B."ID" <> K."Keep" ORDER BY B."ID" """);

    /// <summary>The check: blockset entries whose block does not exist, and the first blocksets holding them.</summary>
    public static readonly SqlStatement CheckDanglingEntries = new(
        nameof(CheckDanglingEntries),
        """SELECT E."BlocksetID" FROM "BlocksetEntry" E WHERE NOT EXISTS (SELECT 1 FROM "Block" B WHERE B."ID" = E."BlockID") ORDER BY E."BlocksetID" """);

    /// <summary>The check: blocksets whose <c>Length</c> is not the sum of their blocks' sizes.</summary>
    public static readonly SqlStatement CheckLengthMismatches = new(
        nameof(CheckLengthMismatches),
        """SELECT S."ID" FROM "Blockset" S WHERE S."Length" <> (SELECT COALESCE(SUM(B."Size"), 0) FROM "BlocksetEntry" E JOIN "Block" B ON B."ID" = E."BlockID" WHERE E."BlocksetID" = S."ID") ORDER BY S."ID" """);

    /// <summary>The check: blocksets whose entry indexes are not exactly 0 to n − 1.</summary>
    public static readonly SqlStatement CheckEntryOrder = new(
        nameof(CheckEntryOrder),
        """SELECT "BlocksetID" FROM "BlocksetEntry" GROUP BY "BlocksetID" HAVING MIN("Index") <> 0 OR MAX("Index") <> COUNT(*) - 1 ORDER BY "BlocksetID" """);

    /// <summary>The check and the repair: blocks whose ID is below 1 or above <c>@Max</c>.</summary>
    public static readonly SqlStatement CheckIdsOutOfRange = new(
        nameof(CheckIdsOutOfRange), """SELECT "ID" FROM "Block" WHERE "ID" < 1 OR "ID" > @Max ORDER BY "ID" """, "@Max");

    /// <summary>The check: blocks whose hash is not of type <c>@Type</c> (<c>text</c> or <c>blob</c>) or not 1 to <c>@MaxLength</c> long (characters or bytes).</summary>
    public static readonly SqlStatement CheckUnusableHashes = new(
        nameof(CheckUnusableHashes),
        """SELECT "ID" FROM "Block" WHERE typeof("Hash") <> @Type OR length("Hash") NOT BETWEEN 1 AND @MaxLength ORDER BY "ID" """,
        "@Type", "@MaxLength");

    /// <summary>The check: every block, to look each up in the key map.</summary>
    public static readonly SqlStatement CheckAllBlocks = new(
        nameof(CheckAllBlocks), """SELECT "ID", "Hash", "Size" FROM "Block" """);

    /// <summary>The repair: moves a block's entries to another block.</summary>
    public static readonly SqlStatement RepointEntries = new(
        nameof(RepointEntries), """UPDATE "BlocksetEntry" SET "BlockID" = @To WHERE "BlockID" = @From""", "@To", "@From");

    /// <summary>The repair: deletes one block row.</summary>
    public static readonly SqlStatement DeleteBlock = new(
        nameof(DeleteBlock), """DELETE FROM "Block" WHERE "ID" = @ID""", "@ID");

    /// <summary>The repair: gives a block a new ID.</summary>
    public static readonly SqlStatement RenumberBlock = new(
        nameof(RenumberBlock), """UPDATE "Block" SET "ID" = @To WHERE "ID" = @From""", "@To", "@From");

    /// <summary>The repair: the highest block ID in range and the KeyMap high-water mark, to renumber above both.</summary>
    public const string MaxBlockIdInRange = """SELECT COALESCE(MAX("ID"), 0) FROM "Block" WHERE "ID" BETWEEN 1 AND 4294967295""";

    /// <summary>The KeyMap high-water mark.</summary>
    public const string ReadMaxBlockId = """SELECT "MaxBlockId" FROM "BlockDbState" """;

    /// <summary>The native library version, as SQL (<c>sqlite_version()</c>).</summary>
    public const string SqliteVersionQuery = "SELECT sqlite_version()";
}
