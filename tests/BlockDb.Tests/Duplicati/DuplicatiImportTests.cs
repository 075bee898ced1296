using BlockDb.Opening;

using static BlockDb.Tests.Duplicati.DuplicatiSessions;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// Bulk imports on a Duplicati database run through a session of their own, so Duplicati's rules apply to them as to
/// every call (blocks into a Blocks volume, blocksets with a full hash and their blocklist blocks), and the file stays
/// clean; on a caller's connection they are refused (they commit in batches of their own).
/// </summary>
public sealed class DuplicatiImportTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Imports_apply_Duplicatis_rules_and_leave_the_file_clean(string provider)
    {
        var path = template.CopyTo(_folder);
        var file = File("imported", 35);
        var binary = file.Select(k => k).ToList();
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path }))
        {
            long volume;
            await using (var session = await db.OpenSessionAsync())
            {
                volume = await session.RegisterVolumeAsync("duplicati-bimport.dblock.zip");
            }

            var noVolume = file.Select(k => new ImportBlock(new BlockKey(k.Hash, k.Size)));
            await Assert.ThrowsAnyAsync<ArgumentException>(async () => await db.ImportBlocksAsync(noVolume.ToAsyncEnumerable()));
            var blocks = file.Concat(Blocklists(file)).Select(k => new ImportBlock(new BlockKey(k.Hash, k.Size), volume));
            Assert.Equal(file.Count + 2, (await db.ImportBlocksAsync(blocks.ToAsyncEnumerable())).Created);

            await Assert.ThrowsAnyAsync<ArgumentException>(async () => await db.ImportBlocksetsAsync(new[] { new ImportBlockset(binary) }.ToAsyncEnumerable()));
            var full = BlockHash.Parse(FullHash("imported"));
            Assert.Equal(1, (await db.ImportBlocksetsAsync(new[] { new ImportBlockset(binary, full) }.ToAsyncEnumerable())).Created);
        }

        Assert.Equal(2, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "BlocklistHash" H JOIN "Blockset" S ON S."ID" = H."BlocksetID" WHERE S."FullHash" = '""" + FullHash("imported") + "'"));
        await AssertCleanAsync(path);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task An_imported_blockset_naming_a_block_of_a_volume_being_deleted_is_refused_and_the_file_stays_clean(string provider)
    {
        var path = template.CopyTo(_folder);
        var file = File("going", 35);
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path }))
        {
            long volume;
            await using (var session = await db.OpenSessionAsync())
            {
                volume = await session.RegisterVolumeAsync("duplicati-bgoing.dblock.zip");
            }

            var blocks = file.Concat(Blocklists(file)).Select(k => new ImportBlock(new BlockKey(k.Hash, k.Size), volume));
            Assert.Equal(file.Count + 2, (await db.ImportBlocksAsync(blocks.ToAsyncEnumerable())).Created);
            await using (var session = await db.OpenSessionAsync())
            {
                await session.SetVolumeStateAsync(volume, VolumeState.Deleting);
            }

            var blockset = new ImportBlockset(file.Select(k => k).ToList(), BlockHash.Parse(FullHash("going")));
            var refused = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await db.ImportBlocksetsAsync(new[] { blockset }.ToAsyncEnumerable()));
            Assert.Contains("being deleted", refused.Message, StringComparison.Ordinal);
        }

        Assert.Equal(0, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Blockset" WHERE "FullHash" = '""" + FullHash("going") + "'"));
        await AssertCleanAsync(path);
    }

    [Fact]
    public async Task Imports_on_a_callers_connection_are_refused()
    {
        var path = template.CopyTo(_folder);
        await using var scope = await DuplicatiScope.OpenAsync(path, new DuplicatiMode(ProviderCatalog.MicrosoftData, true));
        await Assert.ThrowsAsync<NotSupportedException>(async () => await scope.Database.ImportBlocksAsync(AsyncEnumerable.Empty<ImportBlock>()));
    }

    public static IEnumerable<object[]> Providers() => ProviderCatalog.SqliteNames.Select(p => new object[] { p });
}
