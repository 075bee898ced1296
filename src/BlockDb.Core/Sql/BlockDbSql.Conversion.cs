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
}
