using System.Security.Cryptography;
using BlockDb.Duplicati.Fixture;
using BlockDb.Opening;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// A Duplicati v19 database opens as the <see cref="BlockLayout.Duplicati"/> layout, read-write and read-only, with every
/// SQLite provider, and BlockDb leaves it exactly as it was: the same bytes, the same schema, no file of its own beside it.
/// What it never does on such a file (repair) is refused by type.
/// </summary>
public sealed class DuplicatiRecognitionTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> ProvidersAndModes() =>
        from provider in ProviderCatalog.SqliteNames
        from readOnly in new[] { false, true }
        select new object[] { provider, readOnly };

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(ProvidersAndModes))]
    public async Task A_replayed_Duplicati_file_opens_as_the_Duplicati_layout_and_reads_leave_it_byte_for_byte_unchanged(string provider, bool readOnly)
    {
        var path = template.CopyTo(_folder);
        var (bytes, schema) = (FileHash(path), Schema(path));
        var blocks = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Block" """);
        var blocksets = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Blockset" """);
        var entries = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "BlocksetEntry" """);

        await using (var db = Open(provider, path, readOnly))
        {
            Assert.Equal(BlockLayout.Duplicati, db.Layout);
            var check = await db.CheckAsync();
            Assert.Equal(BlockLayout.Duplicati, check.Layout);
            Assert.Equal(new BlockDbCounts(blocks, blocksets, entries), check.Counts);
            Assert.True(check.IsClean, check.ToString());
            Assert.Equal(blocks, await db.EnumerateBlocksAsync().CountAsync());
            Assert.Equal(blocksets, await db.EnumerateBlocksetsAsync().CountAsync());
        }

        Assert.Equal(bytes, FileHash(path));
        Assert.Equal(schema, Schema(path));
        AssertNothingBeside(path);
        DuplicatiFiles.AssertConsistent(path);
    }

    [Theory]
    [MemberData(nameof(ProvidersAndModes))]
    public async Task Both_forms_of_BlockHashVolumeID_are_recognised(string provider, bool readOnly)
    {
        foreach (var form in Enum.GetValues<BlockHashVolumeIdForm>())
        {
            var path = _folder.File($"{form}-{readOnly}.sqlite");
            DuplicatiSchema.CreateFile(path, form, new DuplicatiConfiguration());
            var bytes = FileHash(path);
            await using (var db = Open(provider, path, readOnly))
            {
                Assert.Equal(BlockLayout.Duplicati, db.Layout);
            }

            Assert.Equal(bytes, FileHash(path));
            AssertNothingBeside(path);
        }
    }

    [Theory]
    [MemberData(nameof(ProvidersAndModes))]
    public async Task Repair_is_refused_and_a_session_that_only_reads_leaves_the_file_byte_for_byte_unchanged(string provider, bool readOnly)
    {
        var path = template.CopyTo(_folder);
        var bytes = FileHash(path);
        var (hash, size) = (DuplicatiFiles.Column(path, """SELECT "Hash" FROM "Block" ORDER BY "ID" LIMIT 1""").Single(), DuplicatiFiles.Scalar(path, """SELECT "Size" FROM "Block" ORDER BY "ID" LIMIT 1"""));
        await using (var db = Open(provider, path, readOnly))
        {
            await using (var session = await db.OpenSessionAsync())
            {
                Assert.NotNull(await session.FindBlockAsync(BlockKey.Parse(hash, size)));
                Assert.Equal(DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Block" """), (await session.GetCountsAsync()).Blocks);
            }

            var repair = await Assert.ThrowsAsync<NotSupportedException>(async () => await db.RepairAsync());
            Assert.Contains("Duplicati's own 'repair' command", repair.Message, StringComparison.Ordinal);
        }

        Assert.Equal(bytes, FileHash(path));
        AssertNothingBeside(path);
    }

    [Fact]
    public async Task A_file_without_DeletedBlockHashSize_opens_and_says_so_once_in_the_log()
    {
        var path = template.CopyTo(_folder);
        DuplicatiFiles.Execute(path, """DROP INDEX "DeletedBlockHashSize" """);
        using var logs = new CapturingLoggerFactory();
        await using (var db = new BlockDatabaseBuilder(new BlockDbOptions { Provider = ProviderCatalog.PInvoke, DataSource = path }).UseLoggerFactory(logs).Build())
        {
            Assert.Equal(BlockLayout.Duplicati, db.Layout);
        }

        Assert.Equal(1, logs.Count(6, "DuplicatiIndexMissing"));
        Assert.Contains(logs.Messages, m => m.Id == 6 && m.Text.Contains("DeletedBlockHashSize", StringComparison.Ordinal));
    }

    internal static IBlockDatabase Open(string provider, string path, bool readOnly = false, Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = path, ReadOnly = readOnly };
        configure?.Invoke(options);
        return BlockDatabase.Open(options);
    }

    /// <summary>SHA-256 of the database file's bytes (the header, the schema and every row).</summary>
    internal static string FileHash(string path) => Convert.ToHexString(SHA256.HashData(File.ReadAllBytes(path)));

    /// <summary>Every schema object: type, name and SQL text.</summary>
    internal static List<string> Schema(string path) =>
        DuplicatiFiles.Column(path, "SELECT type || '|' || name || '|' || IFNULL(sql, '') FROM sqlite_schema ORDER BY type, name");

    /// <summary>No file of BlockDb's beside the database (no key-map snapshot), and no WAL left holding frames.</summary>
    internal static void AssertNothingBeside(string path)
    {
        Assert.False(File.Exists(path + "-blockdb-keymap"));
        Assert.True(!File.Exists(path + "-wal") || new FileInfo(path + "-wal").Length == 0, "a WAL with frames was left");
        Assert.False(File.Exists(path + "-journal"));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, "SELECT COUNT(*) FROM sqlite_schema WHERE name LIKE 'BlockDb%'"));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, "PRAGMA application_id"));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, "PRAGMA user_version"));
    }
}
