using System.Security.Cryptography;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;

namespace BlockDb.Tests.Duplicati;

/// <summary>Duplicati's backup statement sequence, replayed: what it writes is what Duplicati writes, and Duplicati's rules hold after it.</summary>
public sealed class DuplicatiBackupReplayTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>
{
    [Fact]
    public void Two_replayed_backups_of_a_few_hundred_files_are_consistent_by_Duplicatis_rules()
    {
        DuplicatiFiles.AssertConsistent(template.Path);

        var (first, second) = (template.Results[0], template.Results[1]);
        Assert.True(first.Files >= 290, $"{first.Files} files");
        Assert.Equal(first.Files, first.FilesRead);
        Assert.True(first.NewBlocks < first.DataBlocks + first.BlocklistBlocks, "no duplicate block was found");
        Assert.True(second.FilesUnchanged > second.Files / 2, $"{second.FilesUnchanged} of {second.Files} files unchanged");
        Assert.True(second.FilesRead > 0);
        Assert.True(first.BlockVolumes > 10, $"{first.BlockVolumes} block volumes");

        // Blocksets over several blocklists, files that share a blockset, metadata shared by no file twice.
        Assert.True(DuplicatiFiles.Scalar(template.Path, """SELECT COUNT(*) FROM (SELECT "BlocksetID" FROM "BlocklistHash" GROUP BY "BlocksetID" HAVING COUNT(*) >= 3)""") > 0);
        Assert.True(DuplicatiFiles.Scalar(template.Path, """SELECT COUNT(*) FROM (SELECT "BlocksetID" FROM "FileLookup" WHERE "BlocksetID" >= 0 GROUP BY "BlocksetID" HAVING COUNT(DISTINCT "Path") > 1)""") > 0);
        Assert.True(DuplicatiFiles.Scalar(template.Path, """SELECT COUNT(*) FROM "FileLookup" WHERE "BlocksetID" = -100""") > 0);
        Assert.True(DuplicatiFiles.Scalar(template.Path, """SELECT COUNT(*) FROM "Blockset" WHERE "Length" = 0""") > 0);
    }

    [Fact]
    public void A_blockset_of_forty_blocks_carries_two_blocklist_hashes_computed_as_Duplicati_does()
    {
        // 1 KiB blocks and SHA-256: 32 hashes per blocklist, so 40 blocks make a full blocklist of 32 hashes (1024
        // bytes) and one of 8 (256 bytes); each is the SHA-256 of the entries' binary hashes in Index order, and each is
        // itself a Block of that size.
        var blockset = DuplicatiFiles.Scalar(template.Path, """SELECT "BlocksetID" FROM "BlocksetEntry" GROUP BY "BlocksetID" HAVING COUNT(*) = 40 LIMIT 1""");
        Assert.True(blockset > 0, "the template holds no blockset of 40 blocks");
        var hashes = DuplicatiFiles.Column(template.Path, $"""SELECT "B"."Hash" FROM "BlocksetEntry" "E" JOIN "Block" "B" ON "B"."ID" = "E"."BlockID" WHERE "E"."BlocksetID" = {blockset} ORDER BY "E"."Index" """);
        var lists = DuplicatiFiles.Column(template.Path, $"""SELECT "Hash" FROM "BlocklistHash" WHERE "BlocksetID" = {blockset} ORDER BY "Index" """);

        var binary = hashes.Select(Convert.FromBase64String).ToList();
        Assert.Equal(
            [Convert.ToBase64String(SHA256.HashData(binary.Take(32).SelectMany(h => h).ToArray())), Convert.ToBase64String(SHA256.HashData(binary.Skip(32).SelectMany(h => h).ToArray()))],
            lists);
        Assert.Equal(1, DuplicatiFiles.Scalar(template.Path, $"""SELECT COUNT(*) FROM "Block" WHERE "Hash" = '{lists[0]}' AND "Size" = 1024"""));
        Assert.Equal(1, DuplicatiFiles.Scalar(template.Path, $"""SELECT COUNT(*) FROM "Block" WHERE "Hash" = '{lists[1]}' AND "Size" = 256"""));
        Assert.All(hashes.Concat(lists), h => Assert.Equal(44, h.Length));
    }

    [Fact]
    public void Volumes_operations_and_filesets_hold_the_values_Duplicati_writes()
    {
        var path = template.Path;
        Assert.Equal(["Backup", "Backup"], DuplicatiFiles.Column(path, """SELECT "Description" FROM "Operation" ORDER BY "ID" """));
        var firstTime = DuplicatiConstants.EpochSeconds(DuplicatiFiles.SmallSource.FirstBackupUtc);
        Assert.Equal([firstTime.ToString(), (firstTime + 86400).ToString()], DuplicatiFiles.Column(path, """SELECT "Timestamp" FROM "Fileset" ORDER BY "ID" """));
        Assert.Equal(["1", "1"], DuplicatiFiles.Column(path, """SELECT "IsFullBackup" FROM "Fileset" ORDER BY "ID" """));

        // After the post-backup listing every volume is Verified, with a size and a hash; nothing else changed the counters.
        Assert.Equal(["Verified"], DuplicatiFiles.Column(path, """SELECT DISTINCT "State" FROM "Remotevolume" """));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Remotevolume" WHERE "Size" <= 0 OR "Hash" IS NULL OR "VerificationCount" != 0 OR "DeleteGraceTime" != 0 OR "ArchiveTime" != 0 OR "LockExpirationTime" != 0"""));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Remotevolume" "V" WHERE "OperationID" NOT IN (SELECT "ID" FROM "Operation")"""));
        Assert.Equal(["duplicati-20260101T020000Z.dlist.zip", "duplicati-20260102T020000Z.dlist.zip"], DuplicatiFiles.Column(path, """SELECT "Name" FROM "Remotevolume" WHERE "Type" = 'Files' ORDER BY "ID" """));
        Assert.All(DuplicatiFiles.Column(path, """SELECT "Name" FROM "Remotevolume" WHERE "Type" = 'Blocks'"""), n => Assert.Matches("^duplicati-b[0-9a-f]{32}\\.dblock\\.zip$", n));

        // One index volume per block volume, linked to it.
        var blockVolumes = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Remotevolume" WHERE "Type" = 'Blocks'""");
        Assert.Equal(template.Results.Sum(r => r.BlockVolumes), blockVolumes);
        Assert.Equal(blockVolumes, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Remotevolume" WHERE "Type" = 'Index'"""));
        Assert.Equal(blockVolumes, DuplicatiFiles.Scalar(path, """SELECT COUNT(DISTINCT "BlockVolumeID") FROM "IndexBlockLink" "L" JOIN "Remotevolume" "I" ON "I"."ID" = "L"."IndexVolumeID" AND "I"."Type" = 'Index'"""));

        // A put log row per uploaded volume; FilesetEntry.Lastmodified in .NET ticks.
        Assert.Equal(DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Remotevolume" """), DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "RemoteOperation" WHERE "Operation" = 'put'"""));
        Assert.True(DuplicatiFiles.Scalar(path, """SELECT MIN("Lastmodified") FROM "FilesetEntry" """) > new DateTime(2020, 1, 1, 0, 0, 0, DateTimeKind.Utc).Ticks);
        Assert.Equal(0, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Metadataset" WHERE "Content" IS NOT NULL"""));
    }

    [Fact]
    public void An_unchanged_file_adds_a_FilesetEntry_only()
    {
        var path = template.Path;
        var unchanged = template.Results[1].FilesUnchanged;

        // An unchanged file's FilesetEntry in the second fileset names the same FileLookup row as in the first.
        Assert.True(unchanged <= DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "FilesetEntry" "A" JOIN "FilesetEntry" "B" ON "A"."FileID" = "B"."FileID" AND "A"."FilesetID" = 1 AND "B"."FilesetID" = 2"""));
        Assert.Equal(
            DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "FilesetEntry" WHERE "FilesetID" = 2"""),
            template.Results[1].Entries);
    }

    [Fact]
    public async Task The_same_source_replayed_twice_writes_the_same_rows()
    {
        using var folder = new TempFolder();
        var source = SyntheticBackupSource.WithFiles(DuplicatiFiles.SmallSource, DuplicatiFiles.SmallBlocks.Blocksize, 120);
        await DuplicatiFiles.CreateAsync(folder.File("a.sqlite"), source, versions: 2);
        await DuplicatiFiles.CreateAsync(folder.File("b.sqlite"), source, versions: 2);

        foreach (var query in new[]
        {
            """SELECT "ID" || ' ' || "Hash" || ' ' || "Size" || ' ' || "VolumeID" FROM "Block" ORDER BY "ID" """,
            """SELECT "BlocksetID" || ' ' || "Index" || ' ' || "BlockID" FROM "BlocksetEntry" ORDER BY 1""",
            """SELECT "BlocksetID" || ' ' || "Index" || ' ' || "Hash" FROM "BlocklistHash" ORDER BY 1""",
            """SELECT "ID" || ' ' || "Name" || ' ' || "State" FROM "Remotevolume" ORDER BY "ID" """,
        })
        {
            Assert.Equal(DuplicatiFiles.Column(folder.File("a.sqlite"), query), DuplicatiFiles.Column(folder.File("b.sqlite"), query));
        }
    }

    [Theory]
    [InlineData(BlockHashVolumeIdForm.Fresh)]
    [InlineData(BlockHashVolumeIdForm.UpgradedThrough11)]
    public async Task Three_backups_on_Duplicatis_default_1_MiB_blocks_are_consistent_on_either_form_of_the_file(BlockHashVolumeIdForm form)
    {
        using var folder = new TempFolder();
        var path = folder.File("default.sqlite");
        var configuration = new DuplicatiConfiguration();
        var source = SyntheticBackupSource.WithBlocks(new SyntheticSourceOptions { Seed = 7 }, configuration.Blocksize, 400);
        var (results, _) = await DuplicatiFiles.CreateAsync(path, source, versions: 3, configuration, form);

        DuplicatiFiles.AssertConsistent(path);
        Assert.True(results[0].DataBlocks >= 400);
        Assert.Equal(
            ["blockhash=SHA256", "blocksize=1048576", "compression-module=zip", "dblock-size=52428800", "filehash=SHA256", "passphrase=no-encryption", "prefix=duplicati"],
            DuplicatiFiles.Column(path, """SELECT "Key" || '=' || "Value" FROM "Configuration" ORDER BY "Key" """));
    }

    [Fact]
    public async Task A_backup_with_another_blocksize_than_the_file_holds_is_refused_before_writing()
    {
        using var folder = new TempFolder();
        var path = template.CopyTo(folder);
        var other = DuplicatiFiles.SmallBlocks with { Blocksize = 2048 };
        var source = SyntheticBackupSource.WithFiles(DuplicatiFiles.SmallSource, 2048, 10);
        var operations = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Operation" """);

        var e = await Assert.ThrowsAsync<InvalidOperationException>(() => DuplicatiBackupReplay.RunBackupAsync(path, source, other));
        Assert.Contains("ParameterChangeNotSupported", e.Message, StringComparison.Ordinal);
        Assert.Equal(operations, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Operation" """));
    }
}
