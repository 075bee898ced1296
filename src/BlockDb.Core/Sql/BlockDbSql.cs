using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>
/// Every SQL statement BlockDb runs, in one place (this class is split by area: operations here, the schema, the
/// KeyMap guards and the check in the other parts). All values are bound as parameters; no SQL is built from caller
/// strings. Table and column names follow Duplicati's schema.
/// </summary>
internal static partial class BlockDbSql
{
    /// <summary>Find a block's ID by hash and size (Duplicati's lookup).</summary>
    public static readonly SqlStatement FindBlock = new(
        nameof(FindBlock), """SELECT "ID" FROM "Block" WHERE "Hash" = @Hash AND "Size" = @Size""", "@Hash", "@Size");

    /// <summary>
    /// A block's ID and its volume's state (NULL without a volume row, as <see cref="GetBlockSizeAndVolumeState"/> joins it)
    /// through the unique (Hash, Size) index: a blockset's block and what its volume check needs, in one read.
    /// </summary>
    public static readonly SqlStatement FindBlockWithVolume = new(
        nameof(FindBlockWithVolume),
        """SELECT B."ID", V."State" FROM "Block" B LEFT JOIN "Remotevolume" V ON V."ID" = B."VolumeID" WHERE B."Hash" = @Hash AND B."Size" = @Size""",
        "@Hash", "@Size");

    /// <summary>
    /// Insert a block (in a volume, or none); its ID is the connection's <c>last_insert_rowid()</c>. Fails with
    /// <c>SQLITE_CONSTRAINT</c> when it exists. The indexed layouts' inserts take the ID as their 4th parameter: NULL lets
    /// SQLite choose (the highest ID + 1), an ID above <see cref="BlockIdFloor"/> (<see cref="IdFloorSql.AboveMax"/>) keeps
    /// a collected ID from being handed out again. No <c>RETURNING</c>: SQLite runs a <c>RETURNING</c> clause as a trigger
    /// whose rows go through an ephemeral table, so every such insert opens that table and a statement journal (about
    /// 20,000 instructions of a TextHash select-xor-insert's 53,000, callgrind, 2026-11-26).
    /// </summary>
    public static readonly SqlStatement InsertBlock = new(
        nameof(InsertBlock), """INSERT INTO "Block" ("Hash", "Size", "VolumeID", "ID") VALUES (@Hash, @Size, @VolumeID, @ID)""", "@Hash", "@Size", "@VolumeID", "@ID");

    /// <summary>Insert a block unless it exists (the first half of <see cref="SelectXorInsertStrategy.InsertOrIgnoreThenSelect"/>); <c>changes()</c> tells which. The ID as in <see cref="InsertBlock"/>.</summary>
    public static readonly SqlStatement InsertBlockOrIgnore = new(
        nameof(InsertBlockOrIgnore), """INSERT OR IGNORE INTO "Block" ("Hash", "Size", "VolumeID", "ID") VALUES (@Hash, @Size, @VolumeID, @ID)""", "@Hash", "@Size", "@VolumeID", "@ID");

    /// <summary>Insert a block and return its ID, or return no row when it exists (upsert with <c>RETURNING</c>). The ID as in <see cref="InsertBlock"/>.</summary>
    public static readonly SqlStatement InsertBlockReturningUnlessExists = new(
        nameof(InsertBlockReturningUnlessExists),
        """INSERT INTO "Block" ("Hash", "Size", "VolumeID", "ID") VALUES (@Hash, @Size, @VolumeID, @ID) ON CONFLICT ("Hash", "Size") DO NOTHING RETURNING "ID" """,
        "@Hash", "@Size", "@VolumeID", "@ID");

    /// <summary>A block's hash, size and volume by ID; no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetBlock = new(
        nameof(GetBlock), """SELECT "Hash", "Size", "VolumeID" FROM "Block" WHERE "ID" = @ID""", "@ID");

    /// <summary>A block's size by ID and the state of its volume (NULL when it has none); no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetBlockSizeAndVolumeState = new(
        nameof(GetBlockSizeAndVolumeState),
        """SELECT B."Size", V."State" FROM "Block" B LEFT JOIN "Remotevolume" V ON V."ID" = B."VolumeID" WHERE B."ID" = @ID""",
        "@ID");

    /// <summary>
    /// Whether any block is in a volume that is <c>Deleting</c> or <c>Deleted</c> (1 or 0; the states as
    /// <see cref="GetBlockSizeAndVolumeState"/>'s readers refuse them): a bulk import reads it once per transaction and,
    /// when it is 0, needs no volume state per block (each layout indexes <c>Block.VolumeID</c>).
    /// </summary>
    public static readonly SqlStatement AnyBlockInGoingVolume = new(
        nameof(AnyBlockInGoingVolume),
        """SELECT EXISTS (SELECT 1 FROM "Remotevolume" V WHERE V."State" IN ('Deleting', 'Deleted') AND EXISTS (SELECT 1 FROM "Block" B WHERE B."VolumeID" = V."ID"))""");

    /// <summary>
    /// Insert a blockset; its ID (the connection's <c>last_insert_rowid()</c>) is above the deleted high-water mark
    /// while that is above every ID (<see cref="BlocksetIdFloor"/>), else the one SQLite chooses (the highest ID + 1).
    /// No <c>RETURNING</c>, for the reason <see cref="InsertBlock"/> gives.
    /// </summary>
    public static readonly SqlStatement InsertBlockset = new(
        nameof(InsertBlockset),
        $"""INSERT INTO "Blockset" ("ID", "Length", "FullHash") VALUES ({IdFloorSql.NextId(IdFloorTable.Blockset)}, @Length, @FullHash)""",
        "@Length", "@FullHash");

    /// <summary>Insert one blockset entry.</summary>
    public static readonly SqlStatement InsertBlocksetEntry = new(
        nameof(InsertBlocksetEntry),
        """INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") VALUES (@BlocksetID, @Index, @BlockID)""",
        "@BlocksetID", "@Index", "@BlockID");

    /// <summary>Entries per <see cref="InsertBlocksetEntries"/>: a blockset's entries are written this many to a statement, the rest one by one.</summary>
    public const int EntriesPerInsert = 16;

    /// <summary>
    /// Insert <see cref="EntriesPerInsert"/> consecutive entries of one blockset in one statement: indexes
    /// <c>@Index</c> to <c>@Index + 15</c>, naming blocks <c>@BlockID0</c> to <c>@BlockID15</c>.
    /// </summary>
    /// <remarks>
    /// <c>OR FAIL</c>, so SQLite gives the statement no statement journal. A statement that writes several rows and may
    /// abort half-way (<c>OR ABORT</c>, the default, on the primary key) gets one inside a transaction: a copy of each page
    /// it changes. Inside the blockset's savepoint, a statement that changed a page the savepoint had not saved yet keeps
    /// all its copies until the savepoint ends, and every other one truncates the in-memory journal back, which walks it
    /// from its start; both grow with the pages of the file the entries land on, so each blockset over existing blocks
    /// cost more than the one before (<see href="https://www.sqlite.org/tempfiles.html"/>, section 2.5; SQLite's
    /// <c>subjRequiresPage</c> and <c>memjrnlTruncate</c>; issue 21, defect 6). A conflict still fails the statement, and
    /// the savepoint around the blockset takes back the rows written before it, as the statement journal did.
    /// </remarks>
    public static readonly SqlStatement InsertBlocksetEntries = new(
        nameof(InsertBlocksetEntries),
        """INSERT OR FAIL INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") VALUES """
            + string.Join(", ", Enumerable.Range(0, EntriesPerInsert).Select(i => $"""(@BlocksetID, @Index + {i}, @BlockID{i})""")),
        ["@BlocksetID", "@Index", .. Enumerable.Range(0, EntriesPerInsert).Select(i => $"@BlockID{i}")]);

    /// <summary>A blockset's length, full hash and entry count; no row when the ID is unknown.</summary>
    public static readonly SqlStatement GetBlockset = new(
        nameof(GetBlockset),
        """SELECT "Length", "FullHash", (SELECT COUNT(*) FROM "BlocksetEntry" WHERE "BlocksetID" = @ID) FROM "Blockset" WHERE "ID" = @ID""",
        "@ID");

    /// <summary>The lowest blockset ID with a full hash and a length; no row when none.</summary>
    public static readonly SqlStatement FindBlockset = new(
        nameof(FindBlockset),
        """SELECT "ID" FROM "Blockset" WHERE "FullHash" = @FullHash AND "Length" = @Length ORDER BY "ID" LIMIT 1""",
        "@FullHash", "@Length");

    /// <summary>Deletes a blockset's entries.</summary>
    public static readonly SqlStatement DeleteBlocksetEntries = new(
        nameof(DeleteBlocksetEntries), """DELETE FROM "BlocksetEntry" WHERE "BlocksetID" = @ID""", "@ID");

    /// <summary>Deletes a blockset row; <c>changes()</c> is 0 when the ID is unknown.</summary>
    public static readonly SqlStatement DeleteBlockset = new(
        nameof(DeleteBlockset), """DELETE FROM "Blockset" WHERE "ID" = @ID""", "@ID");

    /// <summary>
    /// A blockset's blocks from @From on, in order (a listing into the caller's buffer: the caller stops stepping when its
    /// buffer is full, so no LIMIT). No parameter here is one SQLite prepares the statement again for after each new
    /// binding (sqlite.org/c3ref/prepare.html: "the specific value bound to a host parameter in the WHERE clause might
    /// influence the choice of query plan"): a <c>LIMIT @Count</c> is (SQLite reads a bound LIMIT as a constant), and so
    /// is <c>@From</c> in a range term once <c>sqlite_stat4</c> exists; <c>+@From</c> is an expression SQLite does not
    /// sample, and the range still runs on the primary key. The re-prepare cost about 100,000 instructions a call here.
    /// </summary>
    public static readonly SqlStatement ListBlocksetBlocksFrom = new(
        nameof(ListBlocksetBlocksFrom),
        """SELECT E."Index", B."ID", B."Hash", B."Size" FROM "BlocksetEntry" E JOIN "Block" B ON B."ID" = E."BlockID" WHERE E."BlocksetID" = @BlocksetID AND E."Index" >= +@From ORDER BY E."Index" """,
        "@BlocksetID", "@From");

    /// <summary>Row counts of the three tables.</summary>
    public static readonly SqlStatement Counts = new(
        nameof(Counts),
        """SELECT (SELECT COUNT(*) FROM "Block"), (SELECT COUNT(*) FROM "Blockset"), (SELECT COUNT(*) FROM "BlocksetEntry")""");

    /// <summary>Starts a read transaction: the first read takes a snapshot that the following reads share, and no write lock is taken.</summary>
    public const string BeginRead = "BEGIN DEFERRED";

    /// <summary><see cref="BeginRead"/>, prepared once per session for its read batches.</summary>
    public static readonly SqlStatement BeginReadBatch = new(nameof(BeginReadBatch), BeginRead);

    /// <summary>Starts a write transaction, taking the write lock at once so it cannot fail to upgrade later.</summary>
    public static readonly SqlStatement Begin = new(nameof(Begin), "BEGIN IMMEDIATE");

    /// <summary>Commits the open transaction.</summary>
    public static readonly SqlStatement Commit = new(nameof(Commit), "COMMIT");

    /// <summary>Rolls the open transaction back.</summary>
    public static readonly SqlStatement Rollback = new(nameof(Rollback), "ROLLBACK");

    /// <summary>Marks the start of one blockset's writes inside the open transaction.</summary>
    public static readonly SqlStatement Savepoint = new(nameof(Savepoint), """SAVEPOINT "BlockDbOp" """);

    /// <summary>A call's step inside a caller's transaction (External mode): all of the call's writes or none, released before the call returns.</summary>
    public static readonly SqlStatement StepSavepoint = new(nameof(StepSavepoint), """SAVEPOINT "BlockDbStep" """);

    /// <summary>Keeps the step's writes in the caller's transaction (a nested release commits nothing).</summary>
    public static readonly SqlStatement ReleaseStep = new(nameof(ReleaseStep), """RELEASE "BlockDbStep" """);

    /// <summary>Undoes the step's writes, keeping everything of the caller's transaction before it.</summary>
    public static readonly SqlStatement RollbackToStep = new(nameof(RollbackToStep), """ROLLBACK TO "BlockDbStep" """);

    /// <summary>Keeps the writes since <see cref="Savepoint"/> (they commit with the transaction).</summary>
    public static readonly SqlStatement ReleaseSavepoint = new(nameof(ReleaseSavepoint), """RELEASE "BlockDbOp" """);

    /// <summary>Undoes the writes since <see cref="Savepoint"/>, keeping earlier writes of the transaction.</summary>
    public static readonly SqlStatement RollbackToSavepoint = new(nameof(RollbackToSavepoint), """ROLLBACK TO "BlockDbOp" """);

    /// <summary>Blocks in ID order, optionally of one volume (<c>@VolumeID</c> not NULL) and optionally only unreferenced ones (<c>@Unreferenced</c> = 1).</summary>
    public static readonly SqlStatement EnumerateBlocks = new(
        nameof(EnumerateBlocks),
        $"""SELECT B."ID", B."Hash", B."Size", B."VolumeID" FROM "Block" B WHERE (@VolumeID IS NULL OR B."VolumeID" = @VolumeID) AND (@Unreferenced = 0 OR {Unreferenced}) ORDER BY B."ID" """,
        "@VolumeID", "@Unreferenced");

    /// <summary>Every blockset with its length, full hash and entry count, in ID order.</summary>
    public static readonly SqlStatement EnumerateBlocksets = new(
        nameof(EnumerateBlocksets),
        """SELECT S."ID", S."Length", S."FullHash", (SELECT COUNT(*) FROM "BlocksetEntry" E WHERE E."BlocksetID" = S."ID") FROM "Blockset" S ORDER BY S."ID" """);
}
