using BlockDb.Duplicati.Fixture;
using static BlockDb.Tests.Duplicati.DuplicatiSessions;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// What a Duplicati database cannot hold is refused by type, says what was wrong and what is allowed, and writes nothing:
/// a block without a volume, in a Files volume or larger than the block size; a blockset without a full hash, with sizes
/// Duplicati's positions do not give, or whose blocklist block is missing; deleting a blockset a file names; a volume
/// registered when the file has no Operation row.
/// </summary>
public sealed class DuplicatiSessionRefusalTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private const string Tables = """SELECT (SELECT COUNT(*) FROM "Block") || '|' || (SELECT COUNT(*) FROM "Blockset") || '|' || (SELECT COUNT(*) FROM "BlocksetEntry") || '|' || (SELECT COUNT(*) FROM "BlocklistHash") || '|' || (SELECT COUNT(*) FROM "Remotevolume") || '|' || (SELECT COUNT(*) FROM "DeletedBlock")""";

    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Modes() => DuplicatiMode.All();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Blocks_the_file_cannot_hold_are_refused_by_type_and_nothing_is_written(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var filesVolume = DuplicatiFiles.Scalar(path, """SELECT MIN("ID") FROM "Remotevolume" WHERE "Type" = 'Files'""");
        long volume;
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            volume = await scope.Session.RegisterVolumeAsync("duplicati-bref.dblock.zip");
        }

        var before = DuplicatiFiles.Column(path, Tables);
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var s = scope.Session;
            var block = Key("refused", 0);
            var none = await Assert.ThrowsAsync<ArgumentException>(async () => await s.SelectXorInsertAsync(block));
            Assert.Contains("records every new block in a volume", none.Message, StringComparison.Ordinal);
            await Assert.ThrowsAsync<ArgumentException>(async () => await s.SelectXorInsertManyAsync(new[] { block }, new SelectXorInsertResult[1]));

            await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await s.SelectXorInsertAsync(block, filesVolume));

            var large = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await s.SelectXorInsertAsync(new BlockKey(block.Hash, Blocksize + 1), volume));
            Assert.Contains("block size of 1,024 bytes", large.Message, StringComparison.Ordinal);

            var md5 = Convert.ToBase64String(new byte[16]);
            await Assert.ThrowsAsync<ArgumentException>(async () => await s.SelectXorInsertAsync(BlockKey.Parse(md5, 100), volume));
        }

        Assert.Equal(before, DuplicatiFiles.Column(path, Tables));
        await AssertCleanAsync(path);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task A_span_without_a_volume_is_refused_up_front_like_the_single_call_even_when_every_block_exists(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var existing = DuplicatiFiles.Column(path, """SELECT "Hash" || ' ' || "Size" FROM "Block" ORDER BY "ID" LIMIT 3""")
            .Select(row => row.Split(' ')).Select(p => new BlockKey(BlockHash.Parse(p[0]), long.Parse(p[1], System.Globalization.CultureInfo.InvariantCulture))).ToArray();
        var before = DuplicatiFiles.Column(path, Tables);
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var s = scope.Session;
            var single = await Assert.ThrowsAsync<ArgumentException>(async () => await s.SelectXorInsertAsync(new BlockKey(BlockHash.Parse(existing[0].Hash.ToString()), existing[0].Size)));
            var span = await Assert.ThrowsAsync<ArgumentException>(async () => await s.SelectXorInsertManyAsync(existing, new SelectXorInsertResult[3]));
            Assert.Equal(single.Message, span.Message);
            var file = await Assert.ThrowsAsync<ArgumentException>(async () => await s.AddBlocksetAsync(existing, new SelectXorInsertResult[3], BlockHash.Parse(FullHash("span"))));
            Assert.Equal(single.Message, file.Message);
            if (!mode.Caller)
            {
                // The shared session's writer looks known blocks up before its savepoint: the rule comes first there too.
                await using var shared = scope.Database.OpenSharedSession();
                var sharedSpan = await Assert.ThrowsAsync<ArgumentException>(async () => await shared.SelectXorInsertManyAsync(existing, new SelectXorInsertResult[3]));
                Assert.Equal(single.Message, sharedSpan.Message);
            }
        }

        Assert.Equal(before, DuplicatiFiles.Column(path, Tables));
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task A_span_with_a_block_the_file_cannot_hold_writes_none_of_its_blocks(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        long volume;
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            volume = await scope.Session.RegisterVolumeAsync("duplicati-bspan.dblock.zip");
        }

        var before = DuplicatiFiles.Column(path, Tables);
        var blocks = new[] { Key("span-ok", 0), Key("span-large", 1, Blocksize + 1) }
            .Select(k => k).ToArray();
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await scope.Session.SelectXorInsertManyAsync(blocks, new SelectXorInsertResult[2], volume));
        }

        Assert.Equal(before, DuplicatiFiles.Column(path, Tables));
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Blocksets_that_break_Duplicatis_rules_are_refused_by_type_and_nothing_of_them_is_written(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var file = File("nolist", 3);
        var uneven = new List<BlockKey> { Key("uneven", 0, 500), Key("uneven", 1, 500) };
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var volume = await scope.Session.RegisterVolumeAsync("duplicati-bsets.dblock.zip");
            foreach (var block in file.Concat(uneven))
            {
                await scope.Session.SelectXorInsertAsync(block, volume);
            }
        }

        var before = DuplicatiFiles.Column(path, Tables);
        var named = DuplicatiFiles.Scalar(path, """SELECT MIN("BlocksetID") FROM "FileLookup" WHERE "BlocksetID" >= 0""");
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var s = scope.Session;
            var noHash = await Assert.ThrowsAsync<ArgumentException>(async () => await s.AddBlocksetAsync(file));
            Assert.Contains("requires a blockset's full hash", noHash.Message, StringComparison.Ordinal);

            // The blocks are there, their blocklist block is not (the caller must store its bytes first).
            var missing = await Assert.ThrowsAsync<BlockNotFoundException>(async () => await s.AddBlocksetAsync(file, FullHash("nolist")));
            Assert.Contains("Blocklist 0 of the blockset", missing.Message, StringComparison.Ordinal);

            var sizes = await Assert.ThrowsAsync<ArgumentException>(async () => await s.AddBlocksetAsync(uneven, FullHash("uneven")));
            Assert.Contains("every block of a file but the last is exactly the block size", sizes.Message, StringComparison.Ordinal);

            var kept = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await s.DeleteBlocksetAsync(named));
            Assert.Contains("FileLookup", kept.Message, StringComparison.Ordinal);
        }

        Assert.Equal(before, DuplicatiFiles.Column(path, Tables));
        await AssertCleanAsync(path);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Registering_a_volume_in_a_file_without_an_Operation_row_is_refused(DuplicatiMode mode)
    {
        var path = _folder.File("unused.sqlite");
        DuplicatiSchema.CreateFile(path, BlockHashVolumeIdForm.Fresh, new DuplicatiConfiguration());
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var refused = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await scope.Session.RegisterVolumeAsync("duplicati-bfirst.dblock.zip"));
            Assert.Contains("no Operation row", refused.Message, StringComparison.Ordinal);
        }

        Assert.Equal(0, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Remotevolume" """));
    }
}
