using BlockDb.Duplicati.Fixture;
using BlockDb.Opening;
using static BlockDb.Tests.Duplicati.DuplicatiRecognitionTests;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// A Duplicati file BlockDb cannot work on, or a setting it cannot honour on one, is refused at open with a typed error
/// that names what was wrong, with every SQLite provider, read-write and read-only, and the file keeps every byte.
/// </summary>
public sealed class DuplicatiBadInputTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Cases() =>
        from provider in ProviderCatalog.SqliteNames
        from readOnly in new[] { false, true }
        from bad in BadFiles.Keys
        select new object[] { provider, readOnly, bad };

    /// <summary>Each bad file: how it is made, and a phrase its refusal must contain.</summary>
    private static readonly Dictionary<string, (Action<string> Make, string Says)> BadFiles = new()
    {
        ["version 18"] = (p => DuplicatiBadFiles.CreateWithVersion(p, 18), "at schema version 18; BlockDb works on version 19"),
        ["version 20"] = (p => DuplicatiBadFiles.CreateWithVersion(p, 20), "written by a newer Duplicati"),
        ["no Metadataset.Content"] = (p => DuplicatiBadFiles.CreateHalfUpgraded(p, HalfUpgrade.MetadatasetContentMissing), "'Metadataset' has no 'Content' column (added by Duplicati's upgrade script 19): a half-finished Duplicati upgrade"),
        ["no LockExpirationTime"] = (p => DuplicatiBadFiles.CreateHalfUpgraded(p, HalfUpgrade.RemotevolumeLockExpirationTimeMissing), "'Remotevolume' has no 'LockExpirationTime' column (added by Duplicati's upgrade script 18)"),
        ["no ChangeJournalData"] = (p => DuplicatiBadFiles.CreateHalfUpgraded(p, HalfUpgrade.ChangeJournalDataMissing), "the table 'ChangeJournalData' is missing (added by Duplicati's upgrade script 8)"),
        ["no blocksize"] = (DuplicatiBadFiles.CreateWithoutBlocksize, "Configuration has no 'blocksize' row"),
        ["second version object"] = (DuplicatiBadFiles.CreateWithSecondVersionObject, "2 schema objects named 'version'"),
        ["never used"] = (p => DuplicatiSchema.CreateFile(p), "never been used: its Configuration table is empty"),
        ["BlockHashSize missing"] = (p => Broken(p, """DROP INDEX "BlockHashSize" """), "index 'BlockHashSize' is missing"),
        ["BlockHashSize not unique"] = (p => Broken(p, """DROP INDEX "BlockHashSize"; CREATE INDEX "BlockHashSize" ON "Block" ("Hash", "Size")"""), "index 'BlockHashSize' is not Duplicati's (found not unique"),
        ["BlocksetFullHash missing"] = (p => Broken(p, """DROP INDEX "BlocksetFullHash" """), "index 'BlocksetFullHash' is missing"),
        ["BlocklistHash index missing"] = (p => Broken(p, """DROP INDEX "BlocklistHashBlocksetIDIndex" """), "index 'BlocklistHashBlocksetIDIndex' is missing"),
        ["RemotevolumeNameOnly missing"] = (p => Broken(p, """DROP INDEX "RemotevolumeNameOnly" """), "index 'RemotevolumeNameOnly' is missing"),
        ["unknown blockhash"] = (p => Broken(p, """UPDATE "Configuration" SET "Value" = 'BLAKE3' WHERE "Key" = 'blockhash'"""), "Configuration 'blockhash' is 'BLAKE3'; allowed: SHA256, SHA1, MD5, SHA384, SHA512"),
        ["no filehash"] = (p => Broken(p, """DELETE FROM "Configuration" WHERE "Key" = 'filehash'"""), "no 'filehash' row"),
        ["blocksize with a unit"] = (p => Broken(p, """UPDATE "Configuration" SET "Value" = '1mb' WHERE "Key" = 'blocksize'"""), "'blocksize' is '1mb'; allowed: a whole number of bytes from 1024"),
        ["blocksize too small"] = (p => Broken(p, """UPDATE "Configuration" SET "Value" = '512' WHERE "Key" = 'blocksize'"""), "'blocksize' is '512'"),
        ["column of another type"] = (p => Broken(p, """DROP INDEX "BlocksetFullHash"; ALTER TABLE "Blockset" DROP COLUMN "FullHash"; ALTER TABLE "Blockset" ADD COLUMN "FullHash" BLOB"""), "'Blockset'.'FullHash' is BLOB where Duplicati's is TEXT NOT NULL"),
        ["extra column"] = (p => Broken(p, """ALTER TABLE "Block" ADD COLUMN "BlockDbKey" INTEGER"""), "'Block' has a column 'BlockDbKey' Duplicati's schema does not have"),
    };

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Cases))]
    public void A_bad_Duplicati_file_is_refused_by_type_naming_what_is_wrong_and_keeps_every_byte(string provider, bool readOnly, string bad)
    {
        var path = _folder.File("bad.sqlite");
        var (make, says) = BadFiles[bad];
        make(path);
        var bytes = FileHash(path);

        var e = Assert.ThrowsAny<BlockDbFormatException>(() => Open(provider, path, readOnly).Dispose());
        Assert.Contains(says, e.Message, StringComparison.Ordinal);
        Assert.Contains(path, e.Message, StringComparison.Ordinal);
        if (bad.StartsWith("version ", StringComparison.Ordinal))
        {
            var version = Assert.IsType<DuplicatiSchemaVersionException>(e);
            Assert.Equal(long.Parse(bad["version ".Length..], System.Globalization.CultureInfo.InvariantCulture), version.FoundVersion);
            Assert.Equal(19, version.SupportedVersion);
        }
        else
        {
            Assert.IsType<BlockDbFormatException>(e);
        }

        Assert.Equal(bytes, FileHash(path));
        AssertNothingBeside(path);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void A_Duplicati_file_opened_with_another_layout_asked_for_is_refused(string provider)
    {
        var path = UsedFile();
        var bytes = FileHash(path);
        foreach (var layout in LayoutCatalog.Created)
        {
            var e = Assert.Throws<BlockDbFormatException>(() => Open(provider, path, configure: o => o.Index.Layout = layout).Dispose());
            Assert.Contains($"has the Duplicati block layout, but BlockDb:Index:Layout asks for {layout}", e.Message, StringComparison.Ordinal);
        }

        Assert.Equal(bytes, FileHash(path));
        AssertNothingBeside(path);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_BlockDb_file_opened_with_the_Duplicati_layout_asked_for_is_refused(string provider)
    {
        var path = _folder.File("blockdb.db");
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path }))
        {
        }

        var e = Assert.Throws<BlockDbFormatException>(() => Open(provider, path, configure: o => o.Index.Layout = BlockLayout.Duplicati).Dispose());
        Assert.Contains($"has the {LayoutCatalog.Default.Layout} block layout, but BlockDb:Index:Layout asks for Duplicati", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_BlockDb_file_that_records_the_Duplicati_layout_is_refused_as_damaged(string provider)
    {
        var path = _folder.File("claims.db");
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = BlockLayout.TextHash } }))
        {
        }

        using (var raw = new RawSql(path))
        {
            raw.Execute($"""UPDATE "BlockDbSettings" SET "Value" = 'Duplicati' WHERE "Name" = '{BlockDbSql.LayoutSetting}'""");
        }

        var e = Assert.Throws<BlockDbFormatException>(() => Open(provider, path).Dispose());
        Assert.Contains("uses the block layout 'Duplicati', which this build does not know (it knows TextHash, BlobHash, KeyMap)", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void BlockDb_does_not_create_a_Duplicati_file_neither_at_a_new_path_nor_in_an_empty_file(string provider)
    {
        var missing = _folder.File("new.sqlite");
        var e = Assert.Throws<BlockDbFormatException>(() => Open(provider, missing, configure: o => o.Index.Layout = BlockLayout.Duplicati).Dispose());
        Assert.Contains("BlockDb does not create Duplicati databases", e.Message, StringComparison.Ordinal);
        Assert.False(File.Exists(missing));

        var empty = _folder.File("empty.sqlite");
        File.WriteAllBytes(empty, []);
        e = Assert.Throws<BlockDbFormatException>(() => Open(provider, empty, configure: o => o.Index.Layout = BlockLayout.Duplicati).Dispose());
        Assert.Contains("BlockDb does not create Duplicati databases", e.Message, StringComparison.Ordinal);
        Assert.Equal(0, new FileInfo(empty).Length);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void A_journal_mode_other_than_WAL_is_refused_on_a_Duplicati_file_before_it_is_changed(string provider)
    {
        var path = UsedFile();
        var bytes = FileHash(path);
        foreach (var configure in new Action<BlockDbOptions>[] { o => o.Pragmas.JournalMode = JournalMode.Delete, o => o.Pragmas.Preset = PragmaPreset.SqliteDefaults })
        {
            var e = Assert.Throws<BlockDbConfigurationException>(() => Open(provider, path, configure: configure).Dispose());
            Assert.Contains("Duplicati keeps its files in WAL", e.Message, StringComparison.Ordinal);
        }

        Assert.Equal(["wal"], DuplicatiFiles.Column(path, "PRAGMA journal_mode"));
        Assert.Equal(bytes, FileHash(path));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void A_select_xor_insert_strategy_that_would_skip_the_take_back_is_refused(string provider)
    {
        var path = UsedFile();
        foreach (var strategy in new[] { SelectXorInsertStrategy.InsertOrIgnoreThenSelect, SelectXorInsertStrategy.InsertReturningThenSelect })
        {
            var e = Assert.Throws<BlockDbConfigurationException>(() => Open(provider, path, configure: o => o.SelectXorInsert = strategy).Dispose());
            Assert.Contains("skip the take-back", e.Message, StringComparison.Ordinal);
        }
    }

    public static IEnumerable<object[]> Providers() => ProviderCatalog.SqliteNames.Select(p => new object[] { p });

    /// <summary>A v19 file whose first backup wrote its Configuration.</summary>
    private string UsedFile()
    {
        var path = _folder.File("used.sqlite");
        DuplicatiSchema.CreateFile(path, configuration: new DuplicatiConfiguration());
        return path;
    }

    private static void Broken(string path, string sql)
    {
        DuplicatiSchema.CreateFile(path, configuration: new DuplicatiConfiguration());
        DuplicatiFiles.Execute(path, sql);
    }
}
