namespace BlockDb.Drivers;

/// <summary>
/// Every SQL statement BlockDb runs, in one place. All values are bound as parameters; no SQL is built
/// from caller strings. Table and column names follow Duplicati's schema (<c>../shared/BRIEF.md</c>).
/// </summary>
public static class BlockDbSql
{
    /// <summary>
    /// The newest schema format version this build writes and reads, stored in <c>PRAGMA user_version</c>.
    /// Version 1 is the <see cref="BlockLayout.TextHash"/> layout (no settings table); version 2 files carry a
    /// <c>BlockDbSettings</c> table whose <c>BlockLayout</c> row names their layout. Builds before version 2
    /// refuse version 2 files as written by a newer BlockDb.
    /// </summary>
    public const int SchemaVersion = 2;

    /// <summary>The schema version of <see cref="BlockLayout.TextHash"/> files (kept at 1 so older builds still open them).</summary>
    public const int TextHashSchemaVersion = 1;

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
    /// The schema of a version-2 file with <paramref name="layout"/>: version 1's tables with <c>Hash</c> as a
    /// BLOB, the hash index only for <see cref="BlockLayout.BlobHash"/>, and the <c>BlockDbSettings</c> table.
    /// </summary>
    /// <param name="layout"><see cref="BlockLayout.BlobHash"/> or <see cref="BlockLayout.KeyMap"/>.</param>
    /// <returns>The DDL statements, in order.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="layout"/> is not a version-2 layout.</exception>
    public static IReadOnlyList<string> SchemaV2(BlockLayout layout)
    {
        if (layout is not (BlockLayout.BlobHash or BlockLayout.KeyMap))
        {
            throw new ArgumentOutOfRangeException(nameof(layout), layout, "Version 2 schemas exist for BlobHash and KeyMap only.");
        }

        List<string> ddl = ["""CREATE TABLE "Block" ("ID" INTEGER PRIMARY KEY, "Hash" BLOB NOT NULL, "Size" INTEGER NOT NULL)"""];
        if (layout == BlockLayout.BlobHash)
        {
            ddl.Add(SchemaV1[1]);
        }

        ddl.AddRange(SchemaV1.Skip(2));
        ddl.Add("""CREATE TABLE "BlockDbSettings" ("Name" TEXT NOT NULL PRIMARY KEY, "Value" TEXT NOT NULL) WITHOUT ROWID""");
        return ddl;
    }

    /// <summary>Reads one row of a version-2 file's settings table; no row when the setting is absent.</summary>
    public static readonly SqlStatement ReadSetting = new(
        nameof(ReadSetting), """SELECT "Value" FROM "BlockDbSettings" WHERE "Name" = @Name""", "@Name");

    /// <summary>Writes one row of a version-2 file's settings table (once, when the file is created).</summary>
    public static readonly SqlStatement WriteSetting = new(
        nameof(WriteSetting), """INSERT INTO "BlockDbSettings" ("Name", "Value") VALUES (@Name, @Value)""", "@Name", "@Value");

    /// <summary>A block's hash and size by ID (the key map verifies each hit with it); no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetBlockById = new(
        nameof(GetBlockById), """SELECT "Hash", "Size" FROM "Block" WHERE "ID" = @ID""", "@ID");

    /// <summary>Blocks with an ID above <c>@ID</c>, in ID order (the key map's initial load and catch-up).</summary>
    public static readonly SqlStatement BlocksAfter = new(
        nameof(BlocksAfter), """SELECT "ID", "Hash" FROM "Block" WHERE "ID" > @ID ORDER BY "ID" """, "@ID");

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

    /// <summary>The native library version, as SQL (<c>sqlite_version()</c>).</summary>
    public const string SqliteVersionQuery = "SELECT sqlite_version()";
}
