using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>The layout conversion: every row read in ID order, and written at the same ID.</summary>
internal static partial class BlockDbSql
{
    /// <summary>Every volume, in ID order.</summary>
    public static readonly SqlStatement CopyVolumesOut = new(
        nameof(CopyVolumesOut), """SELECT "ID", "Name", "State", "Size" FROM "Remotevolume" ORDER BY "ID" """);

    /// <summary>Writes a volume at its ID.</summary>
    public static readonly SqlStatement CopyVolumeIn = new(
        nameof(CopyVolumeIn), """INSERT INTO "Remotevolume" ("ID", "Name", "State", "Size") VALUES (@ID, @Name, @State, @Size)""", "@ID", "@Name", "@State", "@Size");

    /// <summary>Every block, in ID order.</summary>
    public static readonly SqlStatement CopyBlocksOut = new(
        nameof(CopyBlocksOut), """SELECT "ID", "Hash", "Size", "VolumeID" FROM "Block" ORDER BY "ID" """);

    /// <summary>Writes a block at its ID.</summary>
    public static readonly SqlStatement CopyBlockIn = new(
        nameof(CopyBlockIn), """INSERT INTO "Block" ("ID", "Hash", "Size", "VolumeID") VALUES (@ID, @Hash, @Size, @VolumeID)""", "@ID", "@Hash", "@Size", "@VolumeID");

    /// <summary>Every blockset, in ID order.</summary>
    public static readonly SqlStatement CopyBlocksetsOut = new(
        nameof(CopyBlocksetsOut), """SELECT "ID", "Length", "FullHash" FROM "Blockset" ORDER BY "ID" """);

    /// <summary>Writes a blockset at its ID.</summary>
    public static readonly SqlStatement CopyBlocksetIn = new(
        nameof(CopyBlocksetIn), """INSERT INTO "Blockset" ("ID", "Length", "FullHash") VALUES (@ID, @Length, @FullHash)""", "@ID", "@Length", "@FullHash");

    /// <summary>Every blockset entry, in key order.</summary>
    public static readonly SqlStatement CopyEntriesOut = new(
        nameof(CopyEntriesOut), """SELECT "BlocksetID", "Index", "BlockID" FROM "BlocksetEntry" ORDER BY "BlocksetID", "Index" """);

    /// <summary>The rows of each table, to report progress against.</summary>
    public static readonly SqlStatement CopyTotals = new(
        nameof(CopyTotals),
        """SELECT (SELECT COUNT(*) FROM "Remotevolume"), (SELECT COUNT(*) FROM "Block"), (SELECT COUNT(*) FROM "Blockset"), (SELECT COUNT(*) FROM "BlocksetEntry")""");

    /// <summary>Every schema object of the source in creation order (<c>rowid</c> of <c>sqlite_schema</c>), to carry what BlockDb does not own.</summary>
    public static readonly SqlStatement CarrySchemaRows = new(
        nameof(CarrySchemaRows), """SELECT "type", "name", "tbl_name", "sql" FROM main.sqlite_schema ORDER BY "rowid" """);

    /// <summary>The columns of a table with their <c>hidden</c> flag (0 ordinary, 2 and 3 generated), in order.</summary>
    public static readonly SqlStatement CarryColumns = new(
        nameof(CarryColumns), """SELECT "name", "hidden" FROM pragma_table_xinfo(@Table, 'main') ORDER BY "cid" """, "@Table");

    /// <summary>Whether a table is <c>WITHOUT ROWID</c> (<c>1</c>) or a rowid table (<c>0</c>).</summary>
    public static readonly SqlStatement CarryWithoutRowid = new(
        nameof(CarryWithoutRowid), """SELECT "wr" FROM pragma_table_list WHERE "schema" = 'main' AND "name" = @Table""", "@Table");

    /// <summary>The <c>AUTOINCREMENT</c> counters of the source.</summary>
    public static readonly SqlStatement CarrySequencesOut = new(
        nameof(CarrySequencesOut), """SELECT "name", "seq" FROM main.sqlite_sequence""");

    /// <summary>Sets a carried table's <c>AUTOINCREMENT</c> counter to the source's, when its rows created one.</summary>
    public static readonly SqlStatement CarrySequenceUpdate = new(
        nameof(CarrySequenceUpdate), """UPDATE main.sqlite_sequence SET "seq" = @Seq WHERE "name" = @Table""", "@Seq", "@Table");

    /// <summary>Writes a carried table's <c>AUTOINCREMENT</c> counter (an empty table's counter has no row until written).</summary>
    public static readonly SqlStatement CarrySequenceInsert = new(
        nameof(CarrySequenceInsert), """INSERT INTO main.sqlite_sequence ("name", "seq") VALUES (@Table, @Seq)""", "@Table", "@Seq");
}
