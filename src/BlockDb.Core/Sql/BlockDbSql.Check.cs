using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>The check and the repair.</summary>
internal static partial class BlockDbSql
{
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

    /// <summary>The check: blocks whose hash is not of type <c>@Type</c> (<c>text</c> or <c>blob</c>) or not 1 to <c>@MaxLength</c> long (characters or bytes), or whose size is not an integer of 1 or more.</summary>
    public static readonly SqlStatement CheckUnusableHashes = new(
        nameof(CheckUnusableHashes),
        """SELECT "ID" FROM "Block" WHERE typeof("Hash") <> @Type OR length("Hash") NOT BETWEEN 1 AND @MaxLength OR typeof("Size") <> 'integer' OR "Size" < 1 ORDER BY "ID" """,
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

    /// <summary>The check: blocks recorded in a volume that does not exist or is deleted.</summary>
    public static readonly SqlStatement CheckVolumeProblems = new(
        nameof(CheckVolumeProblems),
        """SELECT B."ID" FROM "Block" B WHERE B."VolumeID" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "Remotevolume" V WHERE V."ID" = B."VolumeID" AND V."State" <> 'Deleted') ORDER BY B."ID" """);
}
