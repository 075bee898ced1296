using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>The schema: the tables every layout shares, the settings table, the file's markers.</summary>
internal static partial class BlockDbSql
{
    /// <summary>The <c>BlockDbSettings</c> row that names the layout of a file of schema version 2 or later (a <see cref="BlockLayout"/> name).</summary>
    public const string LayoutSetting = "BlockLayout";

    /// <summary>
    /// The value BlockDb stores in <c>PRAGMA application_id</c> (ASCII <c>BlkD</c>), so a BlockDb file can be
    /// told from other SQLite files (<see href="https://www.sqlite.org/pragma.html#pragma_application_id"/>).
    /// </summary>
    public const int ApplicationId = 0x426C6B44;

    /// <summary>The unique (Hash, Size) index of the indexed layouts, as Duplicati names it.</summary>
    public const string BlockHashIndex = """CREATE UNIQUE INDEX "BlockHashSize" ON "Block" ("Hash", "Size")""";

    /// <summary>The settings table of schema version 2 and later (one <see cref="LayoutSetting"/> row), created unless it exists.</summary>
    public const string SettingsTableIfMissing = """CREATE TABLE IF NOT EXISTS "BlockDbSettings" ("Name" TEXT NOT NULL PRIMARY KEY, "Value" TEXT NOT NULL) WITHOUT ROWID""";

    /// <summary>
    /// The remote volumes (schema version 5), as Duplicati's <c>Remotevolume</c> table: a unique name, the state
    /// (a <see cref="VolumeState"/> name) and the remote file's size in bytes once known; and the index that lists a
    /// volume's blocks. Created unless they exist.
    /// </summary>
    public static readonly IReadOnlyList<string> VolumeTables =
    [
        """CREATE TABLE IF NOT EXISTS "Remotevolume" ("ID" INTEGER PRIMARY KEY, "Name" TEXT NOT NULL, "State" TEXT NOT NULL, "Size" INTEGER NULL)""",
        """CREATE UNIQUE INDEX IF NOT EXISTS "RemotevolumeName" ON "Remotevolume" ("Name")""",
        """CREATE INDEX IF NOT EXISTS "BlockVolume" ON "Block" ("VolumeID")""",
    ];

    /// <summary>Whether <c>Block</c> has its <c>VolumeID</c> column (<c>1</c> or <c>0</c>): files before schema version 5 lack it.</summary>
    public const string BlockHasVolumeColumn = """SELECT COUNT(*) FROM pragma_table_info('Block') WHERE "name" = 'VolumeID'""";

    /// <summary>Adds <c>Block.VolumeID</c> to a file of schema version 4 or earlier (SQLite adds a nullable column without rewriting the table).</summary>
    public const string AddBlockVolumeColumn = """ALTER TABLE "Block" ADD COLUMN "VolumeID" INTEGER NULL""";

    /// <summary>
    /// The tables every layout shares: <c>Blockset</c> (a file's content: <c>Length</c> in bytes, optional
    /// <c>FullHash</c>) and <c>BlocksetEntry</c> (the blockset's blocks in <c>Index</c> order, a <c>WITHOUT ROWID</c>
    /// table keyed by blockset and index), with Duplicati's indexes.
    /// </summary>
    public static readonly IReadOnlyList<string> BlocksetTables =
    [
        """CREATE TABLE "Blockset" ("ID" INTEGER PRIMARY KEY, "Length" INTEGER NOT NULL, "FullHash" TEXT NULL)""",
        """CREATE INDEX "BlocksetFullHash" ON "Blockset" ("FullHash", "Length")""",
        """CREATE TABLE "BlocksetEntry" ("BlocksetID" INTEGER NOT NULL, "Index" INTEGER NOT NULL, "BlockID" INTEGER NOT NULL, CONSTRAINT "BlocksetEntry_PK_IdIndex" PRIMARY KEY ("BlocksetID", "Index")) WITHOUT ROWID""",
        """CREATE INDEX "BlocksetEntry_IndexIdsBackwards" ON "BlocksetEntry" ("BlockID")""",
    ];

    /// <summary>Reads one row of the settings table; no row when the setting is absent.</summary>
    public static readonly SqlStatement ReadSetting = new(
        nameof(ReadSetting), """SELECT "Value" FROM "BlockDbSettings" WHERE "Name" = @Name""", "@Name");

    /// <summary>Writes one row of the settings table unless it holds that setting (when the file is created or upgraded).</summary>
    public static readonly SqlStatement WriteSettingIfMissing = new(
        nameof(WriteSettingIfMissing), """INSERT OR IGNORE INTO "BlockDbSettings" ("Name", "Value") VALUES (@Name, @Value)""", "@Name", "@Value");

    /// <summary>Writes one row of the settings table, replacing its value (the key-map snapshot token).</summary>
    public static readonly SqlStatement WriteSetting = new(
        nameof(WriteSetting), """INSERT INTO "BlockDbSettings" ("Name", "Value") VALUES (@Name, @Value) ON CONFLICT ("Name") DO UPDATE SET "Value" = excluded."Value" """, "@Name", "@Value");

    /// <summary>The native library version, as SQL (<c>sqlite_version()</c>).</summary>
    public const string SqliteVersionQuery = "SELECT sqlite_version()";

    /// <summary>The <c>Block</c> table with hashes stored as <paramref name="hashType"/> (<c>TEXT</c> or <c>BLOB</c>), and the volume that holds each block (NULL when none was given).</summary>
    public static string BlockTable(string hashType) =>
        $"""CREATE TABLE "Block" ("ID" INTEGER PRIMARY KEY, "Hash" {hashType} NOT NULL, "Size" INTEGER NOT NULL, "VolumeID" INTEGER NULL)""";
}
