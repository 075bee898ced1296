using BlockDb.Drivers;

namespace BlockDb.Tests.Conversion;

/// <summary>
/// Files written by older BlockDb builds open with today's build: Fixtures/main-20261122 (commit 6ea04ea, before the
/// KeyMap guards existed: KeyMap at version 2) and Fixtures/main-20261123 (commit b127409, the guards of version 3).
/// A KeyMap file is upgraded in place to the newest version, the other layouts are left at their version, and every
/// block, blockset and ID is kept. Each test works on a copy.
/// </summary>
public sealed class UpgradeTests : IDisposable
{
    private const int Blocks = 65;
    private const string GuardTriggers = """SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'BlockDb%'""";
    private const int Blocksets = 14;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    /// <summary>Each fixture set × the conformance matrix, with the schema version each file was written at.</summary>
    public static IEnumerable<object[]> FixtureMatrix() =>
        from fixture in new[] { ("main-20261122", 2), ("main-20261123", 3) }
        from pair in ConformanceTestBase.Matrix()
        let layout = (BlockLayout)pair[1]
        select new object[] { fixture.Item1, pair[0], layout, layout switch { BlockLayout.KeyMap => fixture.Item2, BlockLayout.TextHash => 1, _ => 2 } };

    [Theory]
    [MemberData(nameof(FixtureMatrix))]
    public async Task An_older_file_opens_with_every_block_and_blockset_and_keeps_its_ids(string fixture, string provider, BlockLayout layout, int writtenVersion)
    {
        var path = CopyFixture(layout, fixture);
        List<(long Id, string Hash, long Size)> before;
        using (var raw = new RawSql(path))
        {
            before = raw.Blocks();
            Assert.Equal(writtenVersion, raw.Scalar("PRAGMA user_version"));
        }

        Assert.Equal(Blocks, before.Count);
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path }))
        {
            Assert.Equal(layout, db.Layout);
            await using var session = await db.OpenSessionAsync();
            Assert.Equal(new BlockDbCounts(Blocks, Blocksets, Blocks), await session.GetCountsAsync());
            foreach (var (id, hash, size) in before)
            {
                Assert.Equal(id, await session.FindBlockAsync(BlockKey.Parse(hash, size)));
                Assert.Equal(new SelectXorInsertResult(id, false), await session.SelectXorInsertAsync(BlockKey.Parse(hash, size)));
            }

            for (long blockset = 1; blockset <= Blocksets; blockset++)
            {
                var listed = await session.ListBlocksetBlocksAsync(blockset);
                Assert.Equal((await session.GetBlocksetAsync(blockset)).Length, listed.Sum(b => b.Block.Size));
                Assert.All(listed, b => Assert.Contains((b.BlockId, b.Block.Hash.ToString(), b.Block.Size), before));
            }

            var created = await session.SelectXorInsertAsync(TestData.Block(-1, 123));
            Assert.Equal(new SelectXorInsertResult(Blocks + 1, true), created);
            await session.CommitAsync();
            var check = await db.CheckAsync();
            Assert.True(check.IsClean, check.ToString());
        }

        using (var raw = new RawSql(path))
        {
            Assert.Equal(LayoutCatalog.Of(layout).SchemaVersion, raw.Scalar("PRAGMA user_version"));
            if (layout == BlockLayout.KeyMap)
            {
                Assert.Equal(BlockDbSql.KeyMapGuardTriggers.Count, raw.Scalar(GuardTriggers));
                Assert.Equal(Blocks + 1, raw.Scalar("""SELECT "MaxBlockId" FROM "BlockDbState" """));
            }
        }
    }

    [Theory]
    [InlineData("main-20261122")]
    [InlineData("main-20261123")]
    public async Task A_read_only_open_refuses_an_older_keymap_file_that_needs_the_upgrade_and_leaves_it_untouched(string fixture)
    {
        var path = CopyFixture(BlockLayout.KeyMap, fixture);
        var bytes = await File.ReadAllBytesAsync(path);
        var e = Assert.Throws<BlockDbFormatException>(() => BlockDatabase.Open(new BlockDbOptions { Provider = "PInvoke", DataSource = path, ReadOnly = true }));
        Assert.Contains("ReadOnly", e.Message, StringComparison.Ordinal);
        Assert.Equal(bytes, await File.ReadAllBytesAsync(path));

        // Opened once for writing, it is then readable read-only.
        await using (BlockDatabase.Open(new BlockDbOptions { Provider = "PInvoke", DataSource = path }))
        {
        }

        await using var readOnly = BlockDatabase.Open(new BlockDbOptions { Provider = "SystemData", DataSource = path, ReadOnly = true });
        await using var session = await readOnly.OpenSessionAsync();
        Assert.Equal(Blocks, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [InlineData("BlockDbGuardInsert")]
    [InlineData("BlockDbStateNoRewind")]
    public async Task A_removed_guard_is_restored_on_open_and_every_key_map_reloads(string trigger)
    {
        var path = _folder.File("guards.db");
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = "PInvoke", DataSource = path }))
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 1));
        }

        long generation;
        using (var raw = new RawSql(path))
        {
            generation = raw.Scalar("""SELECT "Generation" FROM "BlockDbState" """);
            raw.Execute($"""DROP TRIGGER "{trigger}" """);
            Assert.Equal(BlockDbSql.KeyMapGuardTriggers.Count - 1, raw.Scalar(GuardTriggers));
        }

        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = "MicrosoftData", DataSource = path }))
        {
            Assert.True((await db.CheckAsync()).GuardsPresent);
        }

        using (var raw = new RawSql(path))
        {
            Assert.Equal(BlockDbSql.KeyMapGuardTriggers.Count, raw.Scalar(GuardTriggers));
            Assert.True(raw.Scalar("""SELECT "Generation" FROM "BlockDbState" """) > generation);
        }
    }

    [Fact]
    public async Task A_dropped_state_table_is_restored_with_a_generation_above_any_earlier_one()
    {
        var path = _folder.File("state.db");
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = "PInvoke", DataSource = path }))
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 1));
        }

        using (var raw = new RawSql(path))
        {
            raw.Execute("""DROP TABLE "BlockDbState" """);
        }

        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = "PInvoke", DataSource = path }))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(1, await session.FindBlockAsync(TestData.Block(1, 1)));
            Assert.Equal(new SelectXorInsertResult(2, true), await session.SelectXorInsertAsync(TestData.Block(2, 1)));
        }

        using (var check = new RawSql(path))
        {
            Assert.True(check.Scalar("""SELECT "Generation" FROM "BlockDbState" """) > 1_000_000_000_000);
            Assert.Equal(2, check.Scalar("""SELECT "MaxBlockId" FROM "BlockDbState" """));
        }
    }

    private string CopyFixture(BlockLayout layout, string fixture = "main-20261122")
    {
        var path = _folder.File($"{fixture}-{layout}.db");
        File.Copy(Path.Combine(AppContext.BaseDirectory, "Conversion", "Fixtures", fixture, $"{layout}.db"), path);
        return path;
    }
}
