using BlockDb.Opening;

using static BlockDb.Tests.Duplicati.DuplicatiSessions;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// A session works on a replayed Duplicati database in place, on BlockDb's own connection (every SQLite provider) and
/// inside Duplicati's own transaction: blocks, volumes and blocksets are written with Duplicati's columns and rules,
/// read back as BlockDb's API says, and the file stays clean by Duplicati's rules (the fixture's oracle) and by CheckAsync.
/// </summary>
public sealed class DuplicatiSessionOperationsTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Modes() => DuplicatiMode.All();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Blocks_volumes_and_blocksets_written_in_place_leave_the_file_clean_by_Duplicatis_rules(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var file = File("forty", 40); // two blocklists at 32 hashes each
        long volume, blockset, single, empty, oneCallSet;
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var s = scope.Session;
            volume = await s.RegisterVolumeAsync("duplicati-b0123456789abcdef.dblock.zip");

            var first = await s.SelectXorInsertAsync(file[0], volume);
            Assert.True(first.Created);
            Assert.Equal(new SelectXorInsertResult(first.Id, false), await s.SelectXorInsertAsync(file[0], volume));
            Assert.Equal(first.Id, await s.FindBlockAsync(file[0]));
            Assert.Equal(new BlockInfo(first.Id, file[0], volume), await s.GetBlockAsync(first.Id));

            var span = file.Skip(1).Take(10).Select(k => k).ToArray();
            Assert.Equal(10, await s.SelectXorInsertManyAsync(span, new SelectXorInsertResult[span.Length], volume));

            blockset = await AddFileAsync(s, file, volume, FullHash("forty"));
            Assert.Equal(blockset, await s.AddBlocksetAsync(file, FullHash("forty")));
            Assert.Equal(new BlocksetInfo(blockset, (39 * Blocksize) + 300, FullHash("forty"), 40), await s.GetBlocksetAsync(blockset));
            Assert.Equal(file, (await s.ListBlocksetBlocksAsync(blockset)).Select(b => b.Block));
            single = await AddFileAsync(s, [Key("single", 0, 500)], volume, FullHash("single"));

            // A file in one call: its blocklist blocks first (as Duplicati's splitter stores them), then blocks and blockset.
            var oneCall = File("one-call", 33);
            foreach (var list in Blocklists(oneCall))
            {
                await s.SelectXorInsertAsync(list, volume);
            }

            var oneCallKeys = oneCall.Select(k => k).ToArray();
            var oneCallResults = new SelectXorInsertResult[oneCallKeys.Length];
            oneCallSet = await s.AddBlocksetAsync(oneCallKeys, oneCallResults, BlockHash.Parse(FullHash("one-call")), volume);
            Assert.All(oneCallResults, r => Assert.True(r.Created));
            empty = await s.AddBlocksetAsync(Array.Empty<BlockKey>(), FullHash("empty"));

            await s.SetVolumeStateAsync(volume, VolumeState.Uploading);
            Assert.Null((await s.GetVolumeAsync(volume)).Size);
            await s.SetVolumeStateAsync(volume, VolumeState.Uploaded, 4096);
            await s.SetVolumeStateAsync(volume, VolumeState.Verified);
            var info = await s.GetVolumeAsync(volume);
            Assert.Equal((VolumeState.Verified, 4096L, 40L + 2 + 1 + 33 + 2), (info.State, info.Size!.Value, info.Blocks));
            Assert.Equal(info, await s.FindVolumeAsync("duplicati-b0123456789abcdef.dblock.zip"));
        }

        // The blocklist hashes, in index order, as Duplicati's splitter computes them; none for 0 or 1 block.
        Assert.Equal(Blocklists(file).Select(b => b.Hash.ToString()), DuplicatiFiles.Column(path, $"""SELECT "Hash" FROM "BlocklistHash" WHERE "BlocksetID" = {blockset} ORDER BY "Index" """));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "BlocklistHash" WHERE "BlocksetID" IN ({single}, {empty})"""));
        Assert.Equal(Blocklists(File("one-call", 33)).Select(b => b.Hash.ToString()), DuplicatiFiles.Column(path, $"""SELECT "Hash" FROM "BlocklistHash" WHERE "BlocksetID" = {oneCallSet} ORDER BY "Index" """));

        // Every column Remotevolume requires, as Duplicati's RegisterRemoteVolumeAsync and UpdateRemoteVolumeAsync write them.
        Assert.Equal(
            ["1|Blocks|4096||Verified|0|0|0|0"],
            DuplicatiFiles.Column(path, $"""SELECT ("OperationID" = (SELECT MAX("ID") FROM "Operation")) || '|' || "Type" || '|' || "Size" || '|' || IFNULL("Hash", '') || '|' || "State" || '|' || "VerificationCount" || '|' || "DeleteGraceTime" || '|' || "ArchiveTime" || '|' || "LockExpirationTime" FROM "Remotevolume" WHERE "ID" = {volume}"""));
        await AssertCleanAsync(path);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Only_Blocks_volumes_are_visible_and_a_volume_size_of_minus_one_reads_as_unknown(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var blocksVolumes = DuplicatiFiles.Column(path, """SELECT "ID" FROM "Remotevolume" WHERE "Type" = 'Blocks' ORDER BY "ID" """).Select(long.Parse).ToList();
        var filesVolume = DuplicatiFiles.Scalar(path, """SELECT MIN("ID") FROM "Remotevolume" WHERE "Type" = 'Files'""");
        var filesName = DuplicatiFiles.Column(path, $"""SELECT "Name" FROM "Remotevolume" WHERE "ID" = {filesVolume}""").Single();
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            Assert.Equal(blocksVolumes, await scope.Database.EnumerateVolumesAsync().Select(v => v.Id).ToListAsync());
            await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await scope.Session.GetVolumeAsync(filesVolume));
            Assert.Null(await scope.Session.FindVolumeAsync(filesName));
            await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await scope.Session.SetVolumeStateAsync(filesVolume, VolumeState.Deleting));
            var conflict = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await scope.Session.RegisterVolumeAsync(filesName));
            Assert.Contains("exists already", conflict.Message, StringComparison.Ordinal);

            var fresh = await scope.Session.RegisterVolumeAsync("duplicati-bnew.dblock.zip");
            Assert.Null((await scope.Session.GetVolumeAsync(fresh)).Size);
            if (!mode.Caller)
            {
                await scope.Session.CommitAsync(); // the listing reads on a connection of its own
            }

            Assert.Null((await scope.Database.EnumerateVolumesAsync().SingleAsync(v => v.Id == fresh)).Size);
        }

        await AssertCleanAsync(path);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_shared_session_writes_by_Duplicatis_rules_and_leaves_the_file_clean(string provider)
    {
        var path = template.CopyTo(_folder);
        var file = File("shared", 33);
        long blockset;
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path }))
        await using (var shared = db.OpenSharedSession())
        {
            var volume = await shared.RegisterVolumeAsync("duplicati-bshared.dblock.zip");
            await Assert.ThrowsAsync<ArgumentException>(async () => await shared.SelectXorInsertAsync(file[0]));
            blockset = await AddFileAsync(shared, file, volume, FullHash("shared"));
            Assert.Equal(blockset, await shared.FindBlocksetAsync(BlockHash.Parse(FullHash("shared")), (32 * Blocksize) + 300));
        }

        Assert.Equal(2, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "BlocklistHash" WHERE "BlocksetID" = {blockset}"""));
        await AssertCleanAsync(path);
    }

    public static IEnumerable<object[]> Providers() => ProviderCatalog.SqliteNames.Select(p => new object[] { p });

    [Fact]
    public async Task A_block_whose_volume_is_minus_one_reads_as_having_no_volume()
    {
        var path = template.CopyTo(_folder);
        var id = DuplicatiFiles.Scalar(path, """SELECT MIN("ID") FROM "Block" """);
        DuplicatiFiles.Execute(path, $"""UPDATE "Block" SET "VolumeID" = -1 WHERE "ID" = {id}""");
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PInvoke, DataSource = path, ReadOnly = true });
        await using var session = await db.OpenSessionAsync();
        Assert.Null((await session.GetBlockAsync(id)).VolumeId);
        Assert.Null((await db.EnumerateBlocksAsync().FirstAsync(b => b.Id == id)).VolumeId);
    }
}
