using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Consistency;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;
using BlockDb.Opening;
using static BlockDb.Tests.Duplicati.DuplicatiConsistencyTests;
using static BlockDb.Tests.Duplicati.DuplicatiRecognitionTests;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// CheckAsync on a Duplicati file applies Duplicati's rules: on a replayed file it finds nothing, and on each break the
/// oracle's tests inflict it finds the rules the oracle finds (with Duplicati's message for Duplicati's own checks), with
/// every SQLite provider; a file broken so that BlockDb cannot rest on it is refused at open instead.
/// </summary>
public sealed class DuplicatiRulesCheckTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    /// <summary>Duplicati's own checks: BlockDb gives the same message as the oracle (which gives Duplicati's).</summary>
    private static readonly HashSet<string> DuplicatisOwnChecks =
    [
        DuplicatiRule.Lengths, DuplicatiRule.DuplicateBlocklistHashes, DuplicatiRule.BlocklistHashCount, DuplicatiRule.BlocksetWithoutEntries,
        DuplicatiRule.FileWithoutBlockset, DuplicatiRule.FilesetWithoutVolume, DuplicatiRule.FilesVolumeWithoutFileset,
        DuplicatiRule.FilesetEntryWithoutFile, DuplicatiRule.FilesetDifferences,
    ];

    /// <summary>The breaks of <see cref="DuplicatiConsistencyTests"/> that leave a file BlockDb opens.</summary>
    private static readonly Dictionary<string, string> Breaks = new()
    {
        ["deleted BlocklistHash row"] = $"""DELETE FROM "BlocklistHash" WHERE "BlocksetID" = {ManyLists} AND "Index" = 2""",
        ["wrong blocklist hash value"] = $"""UPDATE "BlocklistHash" SET "Hash" = (SELECT "Hash" FROM "Block" ORDER BY "ID" LIMIT 1) WHERE "BlocksetID" = {ManyLists} AND "Index" = 1""",
        ["blocklist block missing"] = $"""DELETE FROM "Block" WHERE "Hash" = (SELECT "Hash" FROM "BlocklistHash" WHERE "BlocksetID" = {ManyLists} AND "Index" = 0)""",
        ["block larger than blocksize"] = $"""INSERT INTO "Block" ("Hash", "Size", "VolumeID") VALUES ('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', 2048, {SomeBlocksVolume})""",
        ["entry naming a missing block"] = $"""UPDATE "BlocksetEntry" SET "BlockID" = 99999999 WHERE "BlocksetID" = {ManyLists} AND "Index" = 3""",
        ["block of another size than its position"] = $"""UPDATE "Block" SET "Size" = 1000 WHERE "ID" = (SELECT "BlockID" FROM "BlocksetEntry" WHERE "BlocksetID" = {ManyLists} AND "Index" = 0)""",
        ["blockset without entries"] = $"""DELETE FROM "BlocksetEntry" WHERE "BlocksetID" = {OneBlock}""",
        ["file naming a missing blockset"] = """UPDATE "FileLookup" SET "BlocksetID" = 99999999 WHERE "ID" = (SELECT MIN("ID") FROM "FileLookup" WHERE "BlocksetID" >= 0)""",
        ["fileset whose volume was deleted"] = """UPDATE "Remotevolume" SET "State" = 'Deleted' WHERE "ID" = (SELECT "VolumeID" FROM "Fileset" ORDER BY "ID" LIMIT 1)""",
        ["files volume without a fileset"] = """INSERT INTO "Remotevolume" ("OperationID", "Name", "Type", "Size", "State", "VerificationCount", "DeleteGraceTime", "ArchiveTime", "LockExpirationTime") VALUES (1, 'duplicati-20260301T000000Z.dlist.zip', 'Files', -1, 'Uploaded', 0, 0, 0, 0)""",
        ["FilesetEntry naming no file"] = """INSERT INTO "FilesetEntry" ("FilesetID", "FileID", "Lastmodified") VALUES (1, 99999999, 0)""",
        ["folder metadata without its first block"] = $"""UPDATE "BlocksetEntry" SET "Index" = 1 WHERE "BlocksetID" = {FolderMetadata}""",
        ["volume state Duplicati cannot parse"] = $"""UPDATE "Remotevolume" SET "State" = 'verified' WHERE "ID" = {SomeBlocksVolume}""",
        ["block in no block volume"] = """UPDATE "Block" SET "VolumeID" = 99999999 WHERE "ID" = (SELECT MIN("ID") FROM "Block")""",
        ["blocklist hash row on a one-block blockset"] = $"""INSERT INTO "BlocklistHash" ("BlocksetID", "Index", "Hash") SELECT {OneBlock}, 0, "Hash" FROM "Block" ORDER BY "ID" LIMIT 1""",
        ["metadataset naming a missing blockset"] = """UPDATE "Metadataset" SET "BlocksetID" = 99999999 WHERE "ID" = (SELECT "MetadataID" FROM "FileLookup" WHERE "BlocksetID" = -100 ORDER BY "ID" LIMIT 1)""",
        ["file naming a missing metadataset"] = """UPDATE "FileLookup" SET "MetadataID" = 99999999 WHERE "ID" = (SELECT MIN("ID") FROM "FileLookup" WHERE "BlocksetID" >= 0)""",
        ["two of Duplicati's own breaks at once"] = $"""DELETE FROM "BlocklistHash" WHERE "BlocksetID" = {ManyLists} AND "Index" = 0; INSERT INTO "FilesetEntry" ("FilesetID", "FileID", "Lastmodified") VALUES (2, 99999998, 0)""",
        ["a trigger of another application (tolerated)"] = """CREATE TRIGGER "Audit" AFTER INSERT ON "LogData" BEGIN SELECT 1; END""",
    };

    public static IEnumerable<object[]> ProvidersAndBreaks() =>
        from provider in ProviderCatalog.SqliteNames
        from name in Breaks.Keys
        select new object[] { provider, name };

    public static IEnumerable<object[]> Providers() => ProviderCatalog.SqliteNames.Select(p => new object[] { p });

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(ProvidersAndBreaks))]
    public async Task Each_break_is_found_under_the_rule_the_oracle_names_with_Duplicatis_message(string provider, string name)
    {
        var path = template.CopyTo(_folder);
        DuplicatiFiles.Execute(path, Breaks[name]);
        var oracle = DuplicatiConsistency.CheckFile(path, new DuplicatiConsistencyOptions { AllowExtraObject = n => n == "Audit" });

        BlockDbCheckResult check;
        await using (var db = Open(provider, path, readOnly: true))
        {
            check = await db.CheckAsync();
        }

        // The oracle's EntryBlockMissing is BlockDb's own DanglingEntries.
        var expected = oracle.Select(f => f.Rule).Where(r => r != DuplicatiRule.EntryBlockMissing).Distinct().Order(StringComparer.Ordinal).ToList();
        Assert.Equal(expected, check.LayoutRules.Select(f => f.Rule).Order(StringComparer.Ordinal).ToList());
        Assert.Equal(oracle.Any(f => f.Rule == DuplicatiRule.EntryBlockMissing), check.DanglingEntries.Found);
        Assert.Equal(expected.Count == 0 && !check.DanglingEntries.Found, check.LayoutRules.Count == 0);
        foreach (var finding in check.LayoutRules.Where(f => DuplicatisOwnChecks.Contains(f.Rule)))
        {
            Assert.Equal(Assert.Single(oracle, f => f.Rule == finding.Rule).Message, finding.Message);
        }

        Assert.All(check.LayoutRules, f => Assert.True(f.Count > 0 && f.Message.Length > 0, f.ToString()));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_tampered_BlocklistHash_row_is_found_by_its_recomputed_value_with_the_blockset_named(string provider)
    {
        var path = template.CopyTo(_folder);
        var blockset = DuplicatiFiles.Scalar(path, "SELECT " + ManyLists);
        DuplicatiFiles.Execute(path, $"""UPDATE "BlocklistHash" SET "Hash" = (SELECT "Hash" FROM "Block" ORDER BY "ID" LIMIT 1) WHERE "BlocksetID" = {blockset} AND "Index" = 1""");

        await using var db = Open(provider, path);
        var check = await db.CheckAsync();

        var finding = Assert.Single(check.LayoutRules);
        Assert.Equal("BlocklistHashValue", finding.Rule);
        Assert.Equal([blockset], finding.FirstIds);
        Assert.Contains($"blockset {blockset}: blocklist 1 is", finding.Message, StringComparison.Ordinal);
        Assert.False(check.IsClean);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_file_after_Duplicatis_own_delete_and_collection_is_clean(string provider)
    {
        var path = template.CopyTo(_folder);
        await DuplicatiBackupReplay.RunDeleteAsync(path, [template.Results[0].FilesetTimeUtc], template.Last.TimeUtc.AddHours(1));
        DuplicatiFiles.AssertConsistent(path);
        Assert.True(DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "DeletedBlock" """) > 0);

        await using var db = Open(provider, path, readOnly: true);
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, string.Join("\n", check.LayoutRules) + check);
    }

    [Theory]
    [InlineData("SHA256")]
    [InlineData("SHA1")]
    [InlineData("MD5")]
    [InlineData("SHA384")]
    [InlineData("SHA512")]
    public async Task Blocklists_of_every_hash_Duplicati_knows_check_clean_as_its_splitter_wrote_them(string hash)
    {
        var path = _folder.File($"{hash}.sqlite");
        var configuration = DuplicatiFiles.SmallBlocks with { BlockHash = hash, FileHash = hash };
        var source = SyntheticBackupSource.WithFiles(DuplicatiFiles.SmallSource, configuration.Blocksize, 60);
        await DuplicatiFiles.CreateAsync(path, source, versions: 1, configuration);
        DuplicatiFiles.AssertConsistent(path);
        Assert.True(DuplicatiFiles.Scalar(path, """SELECT COUNT(DISTINCT "BlocksetID") FROM "BlocklistHash" WHERE "Index" > 0""") > 0, "no blockset of two blocklists");

        await using var db = Open(ProviderCatalog.PInvoke, path, readOnly: true);
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, string.Join("\n", check.LayoutRules));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void Breaks_that_leave_nothing_for_BlockDb_to_rest_on_are_refused_at_open(string provider)
    {
        foreach (var (sql, says) in new[]
        {
            ("""DROP INDEX "BlocksetFullHash"; INSERT INTO "Blockset" ("Length", "FullHash") SELECT "Length", "FullHash" FROM "Blockset" WHERE "Length" = 0 LIMIT 1""", "index 'BlocksetFullHash' is missing"),
            ("""DROP INDEX "BlockHashSize"; CREATE INDEX "BlockHashSize" ON "Block" ("Hash", "Size")""", "index 'BlockHashSize' is not Duplicati's"),
            ("PRAGMA application_id = 1111", "another application (application_id 1111"),
        })
        {
            using var folder = new TempFolder();
            var path = template.CopyTo(folder);
            DuplicatiFiles.Execute(path, sql);
            Assert.NotEmpty(DuplicatiConsistency.CheckFile(path));
            var e = Assert.Throws<BlockDbFormatException>(() => Open(provider, path).Dispose());
            Assert.Contains(says, e.Message, StringComparison.Ordinal);
        }
    }
}
