using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Consistency;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// The oracle of Duplicati's rules finds each kind of break inflicted on a consistent file, under the rule that names it
/// (and for Duplicati's own checks, with Duplicati's message); breaks Duplicati's own check misses are found by the
/// invariants alone.
/// </summary>
public sealed class DuplicatiConsistencyTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    // A data blockset of several blocklists, one of exactly one block, a folder's metadata blockset.
    internal const string ManyLists = """(SELECT "BlocksetID" FROM "BlocklistHash" GROUP BY "BlocksetID" HAVING COUNT(*) >= 3 ORDER BY "BlocksetID" LIMIT 1)""";
    internal const string OneBlock = """(SELECT "E"."BlocksetID" FROM "BlocksetEntry" "E" JOIN "FileLookup" "L" ON "L"."BlocksetID" = "E"."BlocksetID" GROUP BY "E"."BlocksetID" HAVING COUNT(*) = 1 ORDER BY "E"."BlocksetID" LIMIT 1)""";
    internal const string FolderMetadata = """(SELECT "M"."BlocksetID" FROM "FileLookup" "L" JOIN "Metadataset" "M" ON "M"."ID" = "L"."MetadataID" WHERE "L"."BlocksetID" = -100 ORDER BY "L"."ID" LIMIT 1)""";
    internal const string SomeBlocksVolume = """(SELECT "ID" FROM "Remotevolume" WHERE "Type" = 'Blocks' ORDER BY "ID" LIMIT 1)""";

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void The_unbroken_file_has_no_findings() => DuplicatiFiles.AssertConsistent(template.Path);

    [Fact]
    public void A_deleted_BlocklistHash_row_is_found_as_Duplicati_finds_it()
    {
        var findings = Break($"""DELETE FROM "BlocklistHash" WHERE "BlocksetID" = {ManyLists} AND "Index" = 2""");
        Assert.Equal([DuplicatiRule.BlocklistHashCount, DuplicatiRule.BlocklistHashValue], Rules(findings));
        Assert.Equal("Found 1 file(s) with missing blocklist hashes", Message(findings, DuplicatiRule.BlocklistHashCount));
    }

    [Fact]
    public void A_wrong_blocklist_hash_value_is_found_though_Duplicatis_own_check_misses_it()
    {
        var findings = Break($"""UPDATE "BlocklistHash" SET "Hash" = (SELECT "Hash" FROM "Block" ORDER BY "ID" LIMIT 1) WHERE "BlocksetID" = {ManyLists} AND "Index" = 1""");
        Assert.Equal([DuplicatiRule.BlocklistHashValue], Rules(findings));
        Assert.Contains("blocklist 1 is", Message(findings, DuplicatiRule.BlocklistHashValue), StringComparison.Ordinal);
    }

    [Fact]
    public void A_missing_blocklist_block_is_found_though_Duplicatis_own_check_misses_it()
    {
        // What issue 24 saw a garbage collection do: a block named only by a BlocklistHash deleted as unreferenced.
        var findings = Break($"""DELETE FROM "Block" WHERE "Hash" = (SELECT "Hash" FROM "BlocklistHash" WHERE "BlocksetID" = {ManyLists} AND "Index" = 0)""");
        Assert.Equal([DuplicatiRule.BlocklistBlockMissing], Rules(findings));
    }

    [Fact]
    public void A_block_larger_than_the_blocksize_is_found()
    {
        var findings = Break($"""INSERT INTO "Block" ("Hash", "Size", "VolumeID") VALUES ('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', 2048, {SomeBlocksVolume})""");
        Assert.Equal([DuplicatiRule.BlockLargerThanBlocksize], Rules(findings));
        Assert.Contains("of 2048 bytes", Message(findings, DuplicatiRule.BlockLargerThanBlocksize), StringComparison.Ordinal);
    }

    [Fact]
    public void An_entry_naming_a_missing_block_is_found()
    {
        var findings = Break($"""UPDATE "BlocksetEntry" SET "BlockID" = 99999999 WHERE "BlocksetID" = {ManyLists} AND "Index" = 3""");
        Assert.Equal([DuplicatiRule.Lengths, DuplicatiRule.EntryBlockMissing], Rules(findings));
        Assert.StartsWith("Found inconsistency in the following files while validating database: \n/source/", Message(findings, DuplicatiRule.Lengths), StringComparison.Ordinal);
        Assert.EndsWith(". Run repair to fix it.", Message(findings, DuplicatiRule.Lengths), StringComparison.Ordinal);
    }

    [Fact]
    public void An_entry_whose_block_size_is_not_the_one_its_position_gives_is_found()
    {
        var findings = Break($"""UPDATE "Block" SET "Size" = 1000 WHERE "ID" = (SELECT "BlockID" FROM "BlocksetEntry" WHERE "BlocksetID" = {ManyLists} AND "Index" = 0)""");
        Assert.Equal([DuplicatiRule.Lengths, DuplicatiRule.EntryPosition], Rules(findings));
    }

    [Fact]
    public void A_blockset_without_entries_is_found_as_Duplicati_finds_it()
    {
        var findings = Break($"""DELETE FROM "BlocksetEntry" WHERE "BlocksetID" = {OneBlock}""");
        Assert.Equal([DuplicatiRule.Lengths, DuplicatiRule.BlocksetWithoutEntries], Rules(findings));
        Assert.Equal("Detected non-empty blocksets with no associated blocks!", Message(findings, DuplicatiRule.BlocksetWithoutEntries));
    }

    [Fact]
    public void A_file_naming_a_missing_blockset_is_found_as_Duplicati_finds_it()
    {
        var findings = Break("""UPDATE "FileLookup" SET "BlocksetID" = 99999999 WHERE "ID" = (SELECT MIN("ID") FROM "FileLookup" WHERE "BlocksetID" >= 0)""");
        Assert.Equal([DuplicatiRule.FileWithoutBlockset], Rules(findings));
        Assert.Equal("Detected files associated with non-existing blocksets!", Message(findings, DuplicatiRule.FileWithoutBlockset));
    }

    [Fact]
    public void A_fileset_whose_volume_was_deleted_is_found_as_Duplicati_finds_it()
    {
        var findings = Break("""UPDATE "Remotevolume" SET "State" = 'Deleted' WHERE "ID" = (SELECT "VolumeID" FROM "Fileset" ORDER BY "ID" LIMIT 1)""");
        Assert.Equal([DuplicatiRule.FilesetWithoutVolume], Rules(findings));
        Assert.Matches("^Detected 1 fileset with missing volume: FilesetId = 1, Time = \\(2026-01-01 02:00:00Z\\), unmatched VolumeID \\d+$", Message(findings, DuplicatiRule.FilesetWithoutVolume));
        Assert.Empty(DuplicatiConsistency.CheckFile(_folder.File("copy.sqlite"), new DuplicatiConsistencyOptions { LaxForRepair = true }));
    }

    [Fact]
    public void A_files_volume_without_a_fileset_is_found_as_Duplicati_finds_it()
    {
        var findings = Break("""INSERT INTO "Remotevolume" ("OperationID", "Name", "Type", "Size", "State", "VerificationCount", "DeleteGraceTime", "ArchiveTime", "LockExpirationTime") VALUES (1, 'duplicati-20260301T000000Z.dlist.zip', 'Files', -1, 'Uploaded', 0, 0, 0, 0)""");
        Assert.Equal([DuplicatiRule.FilesVolumeWithoutFileset], Rules(findings));
        Assert.Matches("^Detected 1 volume with missing filesets: VolumeId = \\d+, Name = duplicati-20260301T000000Z.dlist.zip, State = Uploaded$", Message(findings, DuplicatiRule.FilesVolumeWithoutFileset));
    }

    [Fact]
    public void A_FilesetEntry_naming_no_file_is_found_as_Duplicati_finds_it()
    {
        var findings = Break("""INSERT INTO "FilesetEntry" ("FilesetID", "FileID", "Lastmodified") VALUES (1, 99999999, 0)""");
        Assert.Equal([DuplicatiRule.FilesetEntryWithoutFile, DuplicatiRule.FilesetDifferences], Rules(findings));
        Assert.Equal(
            "Detected 1 file(s) in FilesetEntry without corresponding FileLookup entry in the following filesets:\nFileset 1: 2026-01-01 02:00:00Z (id = 1)",
            Message(findings, DuplicatiRule.FilesetEntryWithoutFile));
        Assert.Matches("^Unexpected difference in fileset version 1: 2026-01-01 02:00:00Z \\(database id: 1\\), found \\d+ entries, but expected \\d+$", Message(findings, DuplicatiRule.FilesetDifferences));
    }

    [Fact]
    public void A_folder_whose_metadata_has_no_first_block_is_missing_from_its_file_list()
    {
        var findings = Break($"""UPDATE "BlocksetEntry" SET "Index" = 1 WHERE "BlocksetID" = {FolderMetadata}""");
        Assert.Equal([DuplicatiRule.FilesetDifferences, DuplicatiRule.EntryPosition], Rules(findings));
    }

    [Fact]
    public void Two_blocksets_of_the_same_FullHash_and_Length_are_found()
    {
        var findings = Break("""DROP INDEX "BlocksetFullHash"; INSERT INTO "Blockset" ("Length", "FullHash") SELECT "Length", "FullHash" FROM "Blockset" WHERE "Length" = 0 LIMIT 1""");
        Assert.Equal([DuplicatiRule.Schema, DuplicatiRule.FullHash], Rules(findings));
        Assert.Equal("Missing index \"BlocksetFullHash\".", Message(findings, DuplicatiRule.Schema));
    }

    [Fact]
    public void A_volume_state_Duplicati_cannot_parse_is_found()
    {
        var findings = Break($"""UPDATE "Remotevolume" SET "State" = 'verified' WHERE "ID" = {SomeBlocksVolume}""");
        Assert.Equal([DuplicatiRule.VolumeTypeOrState], Rules(findings));
    }

    [Fact]
    public void A_block_in_no_block_volume_is_found()
    {
        var findings = Break("""UPDATE "Block" SET "VolumeID" = 99999999 WHERE "ID" = (SELECT MIN("ID") FROM "Block")""");
        Assert.Equal([DuplicatiRule.BlockVolume], Rules(findings));
    }

    [Fact]
    public void A_blocklist_hash_row_on_a_one_block_blockset_is_found_though_Duplicatis_own_check_misses_it()
    {
        var findings = Break($"""INSERT INTO "BlocklistHash" ("BlocksetID", "Index", "Hash") SELECT {OneBlock}, 0, "Hash" FROM "Block" ORDER BY "ID" LIMIT 1""");
        Assert.Equal([DuplicatiRule.BlocklistHashStray], Rules(findings));
    }

    [Fact]
    public void A_metadataset_naming_a_missing_blockset_is_found()
    {
        var findings = Break("""UPDATE "Metadataset" SET "BlocksetID" = 99999999 WHERE "ID" = (SELECT "MetadataID" FROM "FileLookup" WHERE "BlocksetID" = -100 ORDER BY "ID" LIMIT 1)""");
        Assert.Contains(DuplicatiRule.Metadata, Rules(findings));
        Assert.Contains(DuplicatiRule.FilesetDifferences, Rules(findings));
    }

    [Fact]
    public void A_header_stamped_by_another_application_is_found()
    {
        var findings = Break("PRAGMA application_id = 1111");
        Assert.Equal([DuplicatiRule.Header], Rules(findings));
    }

    [Fact]
    public void A_table_of_another_application_is_found_unless_the_caller_allows_it()
    {
        var findings = Break("""CREATE TABLE "BlockDbSettings" ("Key" TEXT PRIMARY KEY, "Value" TEXT)""");
        Assert.Equal([DuplicatiRule.Schema], Rules(findings));
        Assert.StartsWith("Unknown schema object \"BlockDbSettings\" (table)", findings[0].Message, StringComparison.Ordinal);
        Assert.Empty(DuplicatiConsistency.CheckFile(_folder.File("copy.sqlite"), new DuplicatiConsistencyOptions { AllowExtraObject = n => n == "BlockDbSettings" }));
    }

    [Fact]
    public void A_trigger_on_a_Duplicati_table_is_found()
    {
        var findings = Break("""CREATE TRIGGER "BlockDb_Audit" AFTER INSERT ON "Block" BEGIN SELECT 1; END""");
        Assert.Equal([DuplicatiRule.Schema], Rules(findings));
    }

    [Fact]
    public void A_unique_index_changed_to_a_plain_one_is_found()
    {
        var findings = Break("""DROP INDEX "BlockHashSize"; CREATE INDEX "BlockHashSize" ON "Block" ("Hash", "Size")""");
        Assert.Equal([DuplicatiRule.Schema], Rules(findings));
        Assert.StartsWith("\"BlockHashSize\" differs from Duplicati's", findings[0].Message, StringComparison.Ordinal);
    }

    private IReadOnlyList<ConsistencyFinding> Break(string sql)
    {
        var path = template.CopyTo(_folder);
        DuplicatiFiles.Execute(path, sql);
        return DuplicatiConsistency.CheckFile(path);
    }

    private static List<string> Rules(IReadOnlyList<ConsistencyFinding> findings) => [.. findings.Select(f => f.Rule).Distinct()];

    private static string Message(IReadOnlyList<ConsistencyFinding> findings, string rule) => Assert.Single(findings, f => f.Rule == rule).Message;
}
