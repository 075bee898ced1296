using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Consistency;

namespace BlockDb.Tests.Duplicati;

/// <summary>The fixture's Duplicati v19 file: its schema is Duplicati's (facts §1.2-1.4), and each bad file it makes is one the oracle refuses for the right reason.</summary>
public sealed class DuplicatiSchemaTests
{
    [Fact]
    public void A_new_file_holds_Duplicatis_43_schema_objects_at_version_19_with_a_zero_header_in_WAL_mode()
    {
        using var folder = new TempFolder();
        var path = folder.File("new.sqlite");
        DuplicatiSchema.CreateFile(path);

        Assert.Equal(19, DuplicatiFiles.Scalar(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"));
        Assert.Equal(1, DuplicatiFiles.Scalar(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name = 'File'"));
        Assert.Equal(23, DuplicatiFiles.Scalar(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'"));
        Assert.Equal(43, DuplicatiFiles.Scalar(path, "SELECT COUNT(*) FROM sqlite_master"));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'"));
        Assert.Equal(
            [.. DuplicatiSchema.Tables.Order(StringComparer.Ordinal)],
            DuplicatiFiles.Column(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name COLLATE BINARY"));
        Assert.Equal(
            [.. DuplicatiSchema.Indexes.Append("sqlite_autoindex_Configuration_1").Order(StringComparer.Ordinal)],
            DuplicatiFiles.Column(path, "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name COLLATE BINARY"));
        Assert.Equal(["19"], DuplicatiFiles.Column(path, """SELECT "Version" FROM "Version" """));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, "PRAGMA application_id"));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, "PRAGMA user_version"));
        Assert.Equal(["wal"], DuplicatiFiles.Column(path, "PRAGMA journal_mode"));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Configuration" """));
        DuplicatiFiles.AssertConsistent(path);
    }

    [Fact]
    public void The_tables_have_Duplicatis_columns_and_the_two_entry_tables_have_no_rowid()
    {
        using var folder = new TempFolder();
        var path = folder.File("new.sqlite");
        DuplicatiSchema.CreateFile(path);

        Assert.Equal(
            ["ID", "OperationID", "Name", "Type", "Size", "Hash", "State", "VerificationCount", "DeleteGraceTime", "ArchiveTime", "LockExpirationTime"],
            DuplicatiFiles.Column(path, "SELECT name FROM pragma_table_info('Remotevolume')"));
        Assert.Equal(["0", "1", "1", "1", "0", "0", "1", "1", "1", "1", "1"], DuplicatiFiles.Column(path, "SELECT \"notnull\" FROM pragma_table_info('Remotevolume')"));
        Assert.Equal(["ID", "Hash", "Size", "VolumeID"], DuplicatiFiles.Column(path, "SELECT name FROM pragma_table_info('Block')"));
        Assert.Equal(["ID", "Length", "FullHash"], DuplicatiFiles.Column(path, "SELECT name FROM pragma_table_info('Blockset')"));
        Assert.Equal(["ID", "BlocksetID", "Content"], DuplicatiFiles.Column(path, "SELECT name FROM pragma_table_info('Metadataset')"));
        Assert.Equal(["ID", "Path", "BlocksetID", "MetadataID"], DuplicatiFiles.Column(path, "SELECT name FROM pragma_table_info('File')"));
        Assert.Equal(["BlocksetEntry", "FilesetEntry"], DuplicatiFiles.Column(path, "SELECT name FROM pragma_table_list WHERE wr = 1 ORDER BY name"));
        Assert.Equal(["BlockHashSize", "BlocklistHashBlocksetIDIndex", "BlocksetFullHash", "DeletedBlockHashVolumeID", "FileLookupPath", "PathPrefixPrefix", "RemotevolumeName", "RemotevolumeNameOnly", "UniqueBlockVolumeDuplicateBlock"],
            DuplicatiFiles.Column(path, """SELECT "I".name FROM sqlite_master "M", pragma_index_list("M".name) "I" WHERE "M".type = 'table' AND "I"."unique" = 1 AND "I".origin = 'c' ORDER BY "I".name COLLATE BINARY"""));
    }

    [Theory]
    [InlineData(BlockHashVolumeIdForm.Fresh, 0)]
    [InlineData(BlockHashVolumeIdForm.UpgradedThrough11, 1)]
    public void The_two_forms_differ_only_in_whether_BlockHashVolumeID_is_unique(BlockHashVolumeIdForm form, long unique)
    {
        using var folder = new TempFolder();
        var path = folder.File("new.sqlite");
        DuplicatiSchema.CreateFile(path, form);

        Assert.Equal(unique, DuplicatiFiles.Scalar(path, "SELECT \"unique\" FROM pragma_index_list('Block') WHERE name = 'BlockHashVolumeID'"));
        Assert.Equal(["Hash", "VolumeID"], DuplicatiFiles.Column(path, "SELECT name FROM pragma_index_info('BlockHashVolumeID')"));
        Assert.Equal(43, DuplicatiFiles.Scalar(path, "SELECT COUNT(*) FROM sqlite_master"));
        DuplicatiFiles.AssertConsistent(path);
    }

    [Theory]
    [InlineData(18)]
    [InlineData(20)]
    public void A_file_of_another_schema_version_is_refused_by_its_number(int version)
    {
        using var folder = new TempFolder();
        var path = folder.File("bad.sqlite");
        DuplicatiBadFiles.CreateWithVersion(path, version);

        var finding = Assert.Single(DuplicatiConsistency.CheckFile(path));
        Assert.Equal(DuplicatiRule.Version, finding.Rule);
        Assert.Contains($"says {version}", finding.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(HalfUpgrade.MetadatasetContentMissing, "Metadataset")]
    [InlineData(HalfUpgrade.RemotevolumeLockExpirationTimeMissing, "Remotevolume")]
    [InlineData(HalfUpgrade.ChangeJournalDataMissing, "ChangeJournalData")]
    public void A_half_upgraded_file_is_refused_naming_the_table_that_differs(HalfUpgrade kind, string table)
    {
        using var folder = new TempFolder();
        var path = folder.File("bad.sqlite");
        DuplicatiBadFiles.CreateHalfUpgraded(path, kind);

        Assert.Equal(["19"], DuplicatiFiles.Column(path, """SELECT "Version" FROM "Version" """));
        var finding = Assert.Single(DuplicatiConsistency.CheckFile(path));
        Assert.Equal(DuplicatiRule.Schema, finding.Rule);
        Assert.Contains($"\"{table}\"", finding.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_used_file_whose_Configuration_has_no_blocksize_is_refused()
    {
        using var folder = new TempFolder();
        var path = folder.File("bad.sqlite");
        DuplicatiBadFiles.CreateWithoutBlocksize(path);

        var finding = Assert.Single(DuplicatiConsistency.CheckFile(path));
        Assert.Equal(DuplicatiRule.Configuration, finding.Rule);
        Assert.Contains("'blocksize'", finding.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_second_object_named_version_in_another_letter_case_is_refused_as_Duplicati_refuses_it()
    {
        using var folder = new TempFolder();
        var path = folder.File("bad.sqlite");
        DuplicatiBadFiles.CreateWithSecondVersionObject(path);

        var finding = Assert.Single(DuplicatiConsistency.CheckFile(path));
        Assert.Equal(DuplicatiRule.Version, finding.Rule);
        Assert.StartsWith("2 schema objects are named 'version'", finding.Message, StringComparison.Ordinal);
    }
}
