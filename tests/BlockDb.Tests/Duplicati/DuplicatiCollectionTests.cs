using static BlockDb.Tests.Duplicati.DuplicatiSessions;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// Garbage collection, blockset deletion, the take-back and volume moves on a Duplicati database follow Duplicati's
/// rules: a block a blocklist hash names is referenced, collected blocks go to <c>DeletedBlock</c>, a backup takes a block
/// back from there while its volume still holds the bytes, and <c>DuplicateBlock</c> stays true.
/// </summary>
public sealed class DuplicatiCollectionTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Modes() => DuplicatiMode.All();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Collection_never_deletes_a_block_named_by_a_blocklist_hash(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var blocklistBlocks = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Block" WHERE "Hash" IN (SELECT "Hash" FROM "BlocklistHash")""");
        Assert.True(blocklistBlocks > 10, $"the template has {blocklistBlocks} blocklist blocks");
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var result = await scope.Session.DeleteUnreferencedBlocksAsync();
            Assert.Equal(0, result.Blocks);
        }

        Assert.Equal(blocklistBlocks, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Block" WHERE "Hash" IN (SELECT "Hash" FROM "BlocklistHash")"""));
        await AssertCleanAsync(path);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Collected_blocks_go_to_DeletedBlock_without_their_DuplicateBlock_rows_and_a_backup_takes_them_back(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var file = File("gone", 34);
        var all = file.Concat(Blocklists(file)).ToList();
        long v1, v2, blockset, firstId;
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            v1 = await scope.Session.RegisterVolumeAsync("duplicati-b1.dblock.zip");
            v2 = await scope.Session.RegisterVolumeAsync("duplicati-b2.dblock.zip");
            blockset = await AddFileAsync(scope.Session, file, v1, FullHash("gone"));
            firstId = (await scope.Session.FindBlockAsync(file[0]))!.Value;
        }

        // A compact copied the first block into v2 (Duplicati's RegisterDuplicatedBlockAsync).
        DuplicatiFiles.Execute(path, $"""INSERT INTO "DuplicateBlock" ("BlockID", "VolumeID") VALUES ({firstId}, {v2})""");
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            await scope.Session.DeleteBlocksetAsync(blockset);
            var collected = await scope.Session.DeleteUnreferencedBlocksAsync();
            Assert.Equal(new VolumeCollected(v1, all.Count, all.Sum(b => b.Size)), Assert.Single(collected.ByVolume));
        }

        Assert.Equal(0, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "BlocklistHash" WHERE "BlocksetID" = {blockset}"""));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "DuplicateBlock" """));
        Assert.Equal(
            all.Select(b => $"{b.Hash}|{b.Size}|{v1}").Order(StringComparer.Ordinal),
            DuplicatiFiles.Column(path, """SELECT "Hash" || '|' || "Size" || '|' || "VolumeID" FROM "DeletedBlock" """).Order(StringComparer.Ordinal));
        await AssertCleanAsync(path);

        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            // The bytes are still in v1: the block comes back from there, under a new ID, and nothing is to be uploaded.
            var back = await scope.Session.SelectXorInsertAsync(file[0], v2);
            Assert.False(back.Created);
            Assert.Equal(v1, (await scope.Session.GetBlockAsync(back.Id)).VolumeId);
        }

        Assert.Equal(all.Count - 1, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "DeletedBlock" """));
        await AssertCleanAsync(path);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task A_block_collected_from_a_volume_being_deleted_is_not_taken_back_and_Deleted_starts_the_grace(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var block = Key("going", 0, 700);
        long v1, v2;
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var s = scope.Session;
            v1 = await s.RegisterVolumeAsync("duplicati-bgoing.dblock.zip");
            v2 = await s.RegisterVolumeAsync("duplicati-bnext.dblock.zip");
            var blockset = await AddFileAsync(s, [block], v1, FullHash("going"));
            await s.DeleteBlocksetAsync(blockset);
            Assert.Equal(1, (await s.DeleteUnreferencedBlocksAsync(v1)).Blocks);
            await s.SetVolumeStateAsync(v1, VolumeState.Deleting);

            // Its bytes are about to vanish with v1 (DQ2): a new copy goes into v2.
            var again = await s.SelectXorInsertAsync(block, v2);
            Assert.True(again.Created);
            Assert.Equal(v2, (await s.GetBlockAsync(again.Id)).VolumeId);
        }

        Assert.Equal(1, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "DeletedBlock" WHERE "VolumeID" = {v1}"""));
        var before = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            await scope.Session.SetVolumeStateAsync(v1, VolumeState.Deleted);
        }

        var grace = DuplicatiFiles.Scalar(path, $"""SELECT "DeleteGraceTime" FROM "Remotevolume" WHERE "ID" = {v1}""");
        Assert.InRange(grace, before + 7200 - 5, DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 7200 + 5);
        Assert.Equal(0, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "DeletedBlock" WHERE "VolumeID" = {v1}"""));
        await AssertCleanAsync(path);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Setting_a_volume_Deleted_that_fails_halfway_leaves_the_volume_and_its_rows_as_they_were(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var block = Key("halfway", 0, 700);
        long volume;
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var s = scope.Session;
            volume = await s.RegisterVolumeAsync("duplicati-bhalfway.dblock.zip");
            await s.DeleteBlocksetAsync(await AddFileAsync(s, [block], volume, FullHash("halfway")));
            Assert.Equal(1, (await s.DeleteUnreferencedBlocksAsync(volume)).Blocks);
            await s.SetVolumeStateAsync(volume, VolumeState.Deleting);
        }

        // The second of the statements that go with Deleted (dropping the volume's DuplicateBlock rows) fails, after the
        // state change and the DeletedBlock rows' removal ran: a trigger of the test's, as a full disk or I/O error would.
        var id = DuplicatiFiles.Scalar(path, """SELECT MAX("ID") FROM "Block" """);
        DuplicatiFiles.Execute(path, $"""INSERT INTO "DuplicateBlock" ("BlockID", "VolumeID") VALUES ({id}, {volume})""");
        DuplicatiFiles.Execute(path, """CREATE TRIGGER "TestRefuseDuplicateDelete" BEFORE DELETE ON "DuplicateBlock" BEGIN SELECT RAISE(ABORT, 'test: refused'); END""");
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            await Assert.ThrowsAnyAsync<BlockDbException>(async () => await scope.Session.SetVolumeStateAsync(volume, VolumeState.Deleted));
            await scope.Session.RegisterVolumeAsync("duplicati-bafter.dblock.zip"); // the batch goes on and commits
        }

        Assert.Equal(1, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "Remotevolume" WHERE "ID" = {volume} AND "State" = 'Deleting'"""));
        Assert.Equal(1, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "DeletedBlock" WHERE "VolumeID" = {volume}"""));
        Assert.Equal(1, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "DuplicateBlock" WHERE "VolumeID" = {volume}"""));
        Assert.Equal(1, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Remotevolume" WHERE "Name" = 'duplicati-bafter.dblock.zip'"""));
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Moving_a_block_into_the_volume_holding_its_copy_drops_that_DuplicateBlock_row(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        long v1, v2, v3, id;
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            v1 = await scope.Session.RegisterVolumeAsync("duplicati-bm1.dblock.zip");
            v2 = await scope.Session.RegisterVolumeAsync("duplicati-bm2.dblock.zip");
            v3 = await scope.Session.RegisterVolumeAsync("duplicati-bm3.dblock.zip");
            await AddFileAsync(scope.Session, [Key("moved", 0, 900)], v1, FullHash("moved"));
            id = (await scope.Session.FindBlockAsync(new BlockKey(Key("moved", 0, 900).Hash, 900)))!.Value;
        }

        DuplicatiFiles.Execute(path, $"""INSERT INTO "DuplicateBlock" ("BlockID", "VolumeID") VALUES ({id}, {v2}), ({id}, {v3})""");
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            Assert.Equal(1, await scope.Session.MoveBlocksAsync([id], v2));
            Assert.Equal(v2, (await scope.Session.GetBlockAsync(id)).VolumeId);
        }

        Assert.Equal([v3.ToString(System.Globalization.CultureInfo.InvariantCulture)], DuplicatiFiles.Column(path, $"""SELECT "VolumeID" FROM "DuplicateBlock" WHERE "BlockID" = {id}"""));
        await AssertCleanAsync(path);
    }
}
