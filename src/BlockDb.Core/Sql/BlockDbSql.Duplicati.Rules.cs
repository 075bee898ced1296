using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>
/// Duplicati's consistency rules on a Duplicati file, for <see cref="IBlockDatabase.CheckAsync"/>: the checks of its
/// <c>LocalDatabase.VerifyConsistency</c> (docs/DUPLICATI-FACTS.md §8) and the invariants its code relies on (§10).
/// Written apart from the test fixture's oracle on purpose: an oracle must not share code with what it judges. Each
/// query gives the IDs concerned in ascending order (the first column) and what the message needs.
/// </summary>
internal static partial class BlockDbSql
{
    private const string DuplicatiBlocksetSums =
        """SELECT E."BlocksetID" AS "ID", SUM(B."Size") AS "Bytes", COUNT(*) AS "Entries" FROM "BlocksetEntry" E LEFT JOIN "Block" B ON B."ID" = E."BlockID" GROUP BY E."BlocksetID" """;

    /// <summary>§8.1: blocksets a file names whose <c>Length</c> is not the sum of their entries' block sizes: ID, path, Length, sum.</summary>
    public static readonly SqlStatement DuplicatiRuleLengths = new(
        nameof(DuplicatiRuleLengths),
        $"""SELECT S."ID", F."Path", S."Length", IFNULL(T."Bytes", 0) FROM "Blockset" S JOIN "File" F ON F."BlocksetID" = S."ID" LEFT JOIN ({DuplicatiBlocksetSums}) T ON T."ID" = S."ID" WHERE S."Length" <> IFNULL(T."Bytes", 0) ORDER BY S."ID" """);

    /// <summary>§8.2: BlocklistHash rows, and distinct (BlocksetID, Index) among them.</summary>
    public static readonly SqlStatement DuplicatiRuleBlocklistRows = new(
        nameof(DuplicatiRuleBlocklistRows),
        """SELECT (SELECT COUNT(*) FROM "BlocklistHash"), (SELECT COUNT(*) FROM (SELECT DISTINCT "BlocksetID", "Index" FROM "BlocklistHash"))""");

    /// <summary>§8.2: the blocksets holding two BlocklistHash rows of one Index.</summary>
    public static readonly SqlStatement DuplicatiRuleDuplicateBlocklistHashes = new(
        nameof(DuplicatiRuleDuplicateBlocklistHashes),
        """SELECT DISTINCT "BlocksetID" FROM "BlocklistHash" GROUP BY "BlocksetID", "Index" HAVING COUNT(*) > 1 ORDER BY "BlocksetID" """);

    /// <summary>§8.3: blocksets of more than one entry without ⌈entries / @PerList⌉ BlocklistHash rows.</summary>
    public static readonly SqlStatement DuplicatiRuleBlocklistHashCount = new(
        nameof(DuplicatiRuleBlocklistHashCount),
        """SELECT N."ID" FROM (SELECT "BlocksetID" AS "ID", COUNT(*) AS "Entries" FROM "BlocksetEntry" GROUP BY "BlocksetID") N WHERE N."Entries" > 1 AND (N."Entries" + @PerList - 1) / @PerList <> (SELECT COUNT(*) FROM "BlocklistHash" H WHERE H."BlocksetID" = N."ID") ORDER BY N."ID" """,
        "@PerList");

    /// <summary>§8.4: blocksets of positive length without entries.</summary>
    public static readonly SqlStatement DuplicatiRuleBlocksetWithoutEntries = new(
        nameof(DuplicatiRuleBlocksetWithoutEntries),
        """SELECT S."ID" FROM "Blockset" S WHERE S."Length" > 0 AND NOT EXISTS (SELECT 1 FROM "BlocksetEntry" E WHERE E."BlocksetID" = S."ID") ORDER BY S."ID" """);

    /// <summary>§8.5: FileLookup rows naming no blockset (folders −100 and links −200 aside).</summary>
    public static readonly SqlStatement DuplicatiRuleFileWithoutBlockset = new(
        nameof(DuplicatiRuleFileWithoutBlockset),
        """SELECT L."ID" FROM "FileLookup" L WHERE L."BlocksetID" NOT IN (-100, -200) AND NOT EXISTS (SELECT 1 FROM "Blockset" S WHERE S."ID" = L."BlocksetID") ORDER BY L."ID" """);

    /// <summary>§8.6: filesets whose volume is no Files volume that is not Deleted: ID, timestamp, volume.</summary>
    public static readonly SqlStatement DuplicatiRuleFilesetWithoutVolume = new(
        nameof(DuplicatiRuleFilesetWithoutVolume),
        """SELECT F."ID", F."Timestamp", F."VolumeID" FROM "Fileset" F WHERE NOT EXISTS (SELECT 1 FROM "Remotevolume" V WHERE V."ID" = F."VolumeID" AND V."Type" = 'Files' AND V."State" <> 'Deleted') ORDER BY F."ID" """);

    /// <summary>§8.6: Files volumes, not Deleted or Deleting, that no fileset names: ID, name, state.</summary>
    public static readonly SqlStatement DuplicatiRuleFilesVolumeWithoutFileset = new(
        nameof(DuplicatiRuleFilesVolumeWithoutFileset),
        """SELECT V."ID", V."Name", V."State" FROM "Remotevolume" V WHERE V."Type" = 'Files' AND V."State" NOT IN ('Deleted', 'Deleting') AND NOT EXISTS (SELECT 1 FROM "Fileset" F WHERE F."VolumeID" = V."ID") ORDER BY V."ID" """);

    /// <summary>§8.7: the filesets, newest first (a fileset's version number is its position here): ID, timestamp, orphan entries.</summary>
    public static readonly SqlStatement DuplicatiRuleFilesets = new(
        nameof(DuplicatiRuleFilesets),
        """SELECT F."ID", F."Timestamp", (SELECT COUNT(*) FROM "FilesetEntry" E WHERE E."FilesetID" = F."ID" AND NOT EXISTS (SELECT 1 FROM "FileLookup" L WHERE L."ID" = E."FileID")) FROM "Fileset" F ORDER BY F."Timestamp" DESC""");

    /// <summary>§8.7: FilesetEntry rows naming no FileLookup row.</summary>
    public static readonly SqlStatement DuplicatiRuleOrphanEntries = new(
        nameof(DuplicatiRuleOrphanEntries),
        """SELECT E."FilesetID" FROM "FilesetEntry" E WHERE NOT EXISTS (SELECT 1 FROM "FileLookup" L WHERE L."ID" = E."FileID") ORDER BY E."FilesetID" """);

    // A blockset Duplicati's file listing can start: absent, without entries, or with an entry at Index 0 (its LEFT JOINs).
    private const string DuplicatiListable =
        """(NOT EXISTS (SELECT 1 FROM "Blockset" S WHERE S."ID" = {0}) OR NOT EXISTS (SELECT 1 FROM "BlocksetEntry" X WHERE X."BlocksetID" = {0}) OR EXISTS (SELECT 1 FROM "BlocksetEntry" X WHERE X."BlocksetID" = {0} AND X."Index" = 0))""";

    /// <summary>
    /// §8.8 (verifyfilelists): per fileset, the distinct paths Duplicati's listing gives (files whose data and metadata
    /// blocksets it can start; folders and links whose metadata blockset has its first block) and the FilesetEntry rows:
    /// ID, timestamp, listed, stored; only the filesets where the two differ, newest first.
    /// </summary>
    public static readonly SqlStatement DuplicatiRuleFilesetDifferences = new(
        nameof(DuplicatiRuleFilesetDifferences),
        $"""
        SELECT G."ID", G."Timestamp", G."Listed", G."Stored", G."Version" FROM (
            SELECT F."ID", F."Timestamp", ROW_NUMBER() OVER (ORDER BY F."Timestamp" DESC) - 1 AS "Version",
                (SELECT COUNT(*) FROM "FilesetEntry" E WHERE E."FilesetID" = F."ID") AS "Stored",
                (SELECT COUNT(DISTINCT P."Path") FROM "FilesetEntry" E JOIN "File" P ON P."ID" = E."FileID" LEFT JOIN "Metadataset" M ON M."ID" = P."MetadataID"
                 WHERE E."FilesetID" = F."ID" AND (
                    (P."BlocksetID" >= 0 AND {string.Format(System.Globalization.CultureInfo.InvariantCulture, DuplicatiListable, "P.\"BlocksetID\"")}
                        AND (M."ID" IS NULL OR {string.Format(System.Globalization.CultureInfo.InvariantCulture, DuplicatiListable, "M.\"BlocksetID\"")}))
                    OR (P."BlocksetID" IN (-100, -200) AND EXISTS (SELECT 1 FROM "Blockset" S JOIN "BlocksetEntry" X ON X."BlocksetID" = S."ID" AND X."Index" = 0 JOIN "Block" B ON B."ID" = X."BlockID" WHERE S."ID" = M."BlocksetID")))) AS "Listed"
            FROM "Fileset" F) G
        WHERE G."Listed" <> G."Stored" ORDER BY G."Timestamp" DESC
        """);

    /// <summary>§10: blocks larger than the block size <c>@Blocksize</c>: ID, size.</summary>
    public static readonly SqlStatement DuplicatiRuleBlockLargerThanBlocksize = new(
        nameof(DuplicatiRuleBlockLargerThanBlocksize),
        """SELECT "ID", "Size" FROM "Block" WHERE "Size" > @Blocksize ORDER BY "ID" """,
        "@Blocksize");

    /// <summary>
    /// §10: blocksets whose entries are not numbered 0..n−1, not ⌈Length / @Blocksize⌉ of them, or hold a block whose size
    /// is not the one its position gives (every block @Blocksize but the last); and entries of no blockset.
    /// </summary>
    public static readonly SqlStatement DuplicatiRuleEntryPosition = new(
        nameof(DuplicatiRuleEntryPosition),
        """
        SELECT S."ID" FROM "Blockset" S JOIN (SELECT "BlocksetID", COUNT(*) AS "N", MIN("Index") AS "Lo", MAX("Index") AS "Hi" FROM "BlocksetEntry" GROUP BY "BlocksetID") E ON E."BlocksetID" = S."ID"
        WHERE E."N" <> (S."Length" + @Blocksize - 1) / @Blocksize OR E."Lo" <> 0 OR E."Hi" <> E."N" - 1
           OR EXISTS (SELECT 1 FROM "BlocksetEntry" X JOIN "Block" B ON B."ID" = X."BlockID" WHERE X."BlocksetID" = S."ID" AND B."Size" <> min(@Blocksize, S."Length" - X."Index" * @Blocksize))
        UNION
        SELECT DISTINCT E."BlocksetID" FROM "BlocksetEntry" E WHERE NOT EXISTS (SELECT 1 FROM "Blockset" S WHERE S."ID" = E."BlocksetID")
        ORDER BY 1
        """,
        "@Blocksize");

    /// <summary>§5/§10: every entry of the blocksets of more than one entry, in order, with its block's hash (NULL when the block is missing): blockset, hash.</summary>
    public static readonly SqlStatement DuplicatiRuleBlocklistEntries = new(
        nameof(DuplicatiRuleBlocklistEntries),
        """
        SELECT E."BlocksetID", B."Hash" FROM "BlocksetEntry" E LEFT JOIN "Block" B ON B."ID" = E."BlockID"
        WHERE E."BlocksetID" IN (SELECT "BlocksetID" FROM "BlocksetEntry" GROUP BY "BlocksetID" HAVING COUNT(*) > 1)
        ORDER BY E."BlocksetID", E."Index"
        """);

    /// <summary>§5: a blockset's BlocklistHash rows in Index order: index, hash.</summary>
    public static readonly SqlStatement DuplicatiRuleStoredBlocklists = new(
        nameof(DuplicatiRuleStoredBlocklists),
        """SELECT "Index", "Hash" FROM "BlocklistHash" WHERE "BlocksetID" = @ID ORDER BY "Index" """,
        "@ID");

    /// <summary>§5: whether a Block of this hash and size exists (1 or 0).</summary>
    public static readonly SqlStatement DuplicatiRuleBlockExists = new(
        nameof(DuplicatiRuleBlockExists),
        """SELECT EXISTS (SELECT 1 FROM "Block" WHERE "Hash" = @Hash AND "Size" = @Size)""",
        "@Hash", "@Size");

    /// <summary>§10: blocksets with BlocklistHash rows but 0 or 1 entries (or no blockset at all).</summary>
    public static readonly SqlStatement DuplicatiRuleBlocklistHashStray = new(
        nameof(DuplicatiRuleBlocklistHashStray),
        """SELECT DISTINCT H."BlocksetID" FROM "BlocklistHash" H WHERE (SELECT COUNT(*) FROM "BlocksetEntry" E WHERE E."BlocksetID" = H."BlocksetID") <= 1 ORDER BY H."BlocksetID" """);

    /// <summary>§10: blocksets with an empty FullHash, or sharing (FullHash, Length) with another.</summary>
    public static readonly SqlStatement DuplicatiRuleFullHash = new(
        nameof(DuplicatiRuleFullHash),
        """SELECT S."ID" FROM "Blockset" S WHERE S."FullHash" IS NULL OR S."FullHash" = '' OR EXISTS (SELECT 1 FROM "Blockset" T WHERE T."FullHash" = S."FullHash" AND T."Length" = S."Length" AND T."ID" <> S."ID") ORDER BY S."ID" """);

    /// <summary>§10: volumes whose Type or State is not one of Duplicati's enum names (compared exactly, as its Enum.Parse does).</summary>
    public static readonly SqlStatement DuplicatiRuleVolumeTypeOrState = new(
        nameof(DuplicatiRuleVolumeTypeOrState),
        """SELECT "ID" FROM "Remotevolume" WHERE "Type" NOT IN ('Blocks', 'Files', 'Index') OR "State" NOT IN ('Temporary', 'Uploading', 'Uploaded', 'Verified', 'Deleting', 'Deleted') ORDER BY "ID" """);

    /// <summary>§10: blocks whose volume is no Blocks volume that is not Deleted.</summary>
    public static readonly SqlStatement DuplicatiRuleBlockVolume = new(
        nameof(DuplicatiRuleBlockVolume),
        """SELECT B."ID" FROM "Block" B WHERE NOT EXISTS (SELECT 1 FROM "Remotevolume" V WHERE V."ID" = B."VolumeID" AND V."Type" = 'Blocks' AND V."State" <> 'Deleted') ORDER BY B."ID" """);

    /// <summary>§10: metadata sets naming no blockset, then files naming no metadata set: ID, which table, the ID it names.</summary>
    public static readonly SqlStatement DuplicatiRuleMetadata = new(
        nameof(DuplicatiRuleMetadata),
        """
        SELECT M."ID", 'Metadataset', M."BlocksetID" FROM "Metadataset" M WHERE NOT EXISTS (SELECT 1 FROM "Blockset" S WHERE S."ID" = M."BlocksetID")
        UNION ALL
        SELECT L."ID", 'FileLookup', L."MetadataID" FROM "FileLookup" L WHERE NOT EXISTS (SELECT 1 FROM "Metadataset" M WHERE M."ID" = L."MetadataID")
        """);
}
