using BlockDb.Opening;

namespace BlockDb.Tests.Diagnostics;

/// <summary>
/// CheckAsync finds what SQL written outside BlockDb can break, and RepairAsync mends what can be mended without
/// losing data, in one transaction, never beside another writer. Real files, every provider.
/// </summary>
public sealed class CheckRepairTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_file_written_only_by_blockdb_checks_clean_in_every_layout(string provider)
    {
        foreach (var layout in LayoutCatalog.Created)
        {
            await using var db = await Filled(provider, layout.ToString(), layout);
            var check = await db.CheckAsync();
            Assert.True(check.IsClean, check.ToString());
            Assert.Equal(layout, check.Layout);
            Assert.Equal(new BlockDbCounts(20, 5, 24), check.Counts);
            Assert.Equal("ok", check.IntegrityCheck);
        }
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Check_reports_each_problem_with_its_first_ids(string provider)
    {
        await using var db = await Filled(provider, "broken.db", BlockLayout.KeyMap);
        long duplicate;
        using (var raw = new RawSql(db.DataSource))
        {
            duplicate = raw.InsertBlock(TestData.Hash(3), 1000);                                            // a second row for block 4 (Hash(3), 1000)
            raw.Execute("""INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") VALUES (2, 7, 999)""");  // dangling, and a gap in blockset 2
            raw.Execute("""UPDATE "Blockset" SET "Length" = "Length" + 1 WHERE "ID" = 4""");                // length mismatch
        }

        var check = await db.CheckAsync();
        Assert.False(check.IsClean);
        Assert.Equal((1, 1), (check.DuplicateGroups, check.Duplicates.Count));
        Assert.Equal([duplicate], check.Duplicates.FirstIds);
        Assert.Equal(1, check.DanglingEntries.Count);
        Assert.Equal([2L], check.DanglingEntries.FirstIds);
        Assert.Equal([4L], check.LengthMismatches.FirstIds);
        Assert.Equal(1, check.EntryOrder.Count);
        Assert.Equal([2L], check.EntryOrder.FirstIds);
        Assert.Equal(0, check.IdsOutOfRange.Count);
        Assert.Equal(0, check.MapMissing.Count);
        Assert.True(check.GuardsPresent);
        Assert.Equal("ok", check.IntegrityCheck);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Repair_merges_duplicates_into_the_lowest_id_in_one_transaction(string provider)
    {
        await using var db = await Filled(provider, "dup.db", BlockLayout.KeyMap);
        long duplicate;
        using (var raw = new RawSql(db.DataSource))
        {
            duplicate = raw.InsertBlock(TestData.Hash(3), 1000);
            raw.Execute($"""UPDATE "BlocksetEntry" SET "BlockID" = {duplicate} WHERE "BlockID" = 4""");
        }

        var repaired = await db.RepairAsync();
        Assert.Equal((1, 1), (repaired.MergedGroups, repaired.DeletedBlocks));
        Assert.True(repaired.RepointedEntries >= 1);
        Assert.True(repaired.After.IsClean, repaired.After.ToString());

        await using var session = await db.OpenSessionAsync();
        Assert.Equal(4, await session.FindBlockAsync(TestData.Block(3, 1000)));
        Assert.Equal(new SelectXorInsertResult(4, false), await session.SelectXorInsertAsync(TestData.Block(3, 1000)));
        using var after = new RawSql(db.DataSource);
        Assert.Equal(0, after.DuplicateGroups());
        Assert.Equal(0, after.Scalar($"""SELECT COUNT(*) FROM "BlocksetEntry" WHERE "BlockID" = {duplicate}"""));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Repair_renumbers_blocks_outside_the_layouts_range_and_moves_their_entries(string provider)
    {
        await using var db = await Filled(provider, "range.db", BlockLayout.TextHash);
        using (var raw = new RawSql(db.DataSource))
        {
            raw.InsertBlock(TestData.Hash(-10), 77, id: 0, blob: false);
            raw.InsertBlock(TestData.Hash(-11), 78, id: -5, blob: false);
            raw.Execute("""INSERT INTO "Blockset" ("ID", "Length", "FullHash") VALUES (100, 155, NULL)""");
            raw.Execute("""INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") VALUES (100, 0, 0), (100, 1, -5)""");
        }

        var check = await db.CheckAsync();
        Assert.Equal(2, check.IdsOutOfRange.Count);
        Assert.Equal([-5L, 0L], check.IdsOutOfRange.FirstIds);

        var repaired = await db.RepairAsync();
        Assert.Equal(2, repaired.RenumberedBlocks);
        Assert.True(repaired.After.IsClean, repaired.After.ToString());
        await using var session = await db.OpenSessionAsync();
        var listed = await session.ListBlocksetBlocksAsync(100);
        Assert.Equal([(TestData.Hash(-10), 77L), (TestData.Hash(-11), 78L)], listed.Select(b => (b.Block.Hash.ToString(), b.Block.Size)));
        Assert.All(listed, b => Assert.True(b.BlockId > 20));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Repair_refuses_to_run_beside_another_writer_and_changes_nothing(string provider)
    {
        // A busy timeout of a minute: a repair that waited for the lock would run once the writer commits and succeed.
        await using var db = await Filled(provider, "busy.db", BlockLayout.KeyMap, o =>
        {
            o.Batching.CommitEvery = 0;
            o.Pragmas.BusyTimeout = 60_000;
        });
        using (var raw = new RawSql(db.DataSource))
        {
            raw.InsertBlock(TestData.Hash(3), 1000);
        }

        await using var writer = await db.OpenSessionAsync();
        await writer.SelectXorInsertAsync(TestData.Block(500, 1)); // an open batch: this session holds the write lock
        var repair = db.RepairAsync().AsTask();
        await Task.WhenAny(repair, Task.Delay(TimeSpan.FromSeconds(15)));
        await writer.CommitAsync(); // a repair still waiting for the lock (the configured busy timeout) now gets it
        var e = await Assert.ThrowsAsync<BlockDbException>(() => repair);
        Assert.Equal(SqliteResultCode.Busy, e.SqliteErrorCode);
        Assert.Contains("another writer", e.Message, StringComparison.Ordinal);

        Assert.Equal(1, (await db.CheckAsync()).DuplicateGroups);
        Assert.Equal(1, (await db.RepairAsync()).MergedGroups);
    }

    [Fact]
    public async Task A_read_only_database_checks_but_refuses_to_repair()
    {
        var path = _folder.File("ro.db");
        await using (await Filled("PInvoke", "ro.db", BlockLayout.KeyMap))
        {
        }

        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = "MicrosoftData", DataSource = path, ReadOnly = true });
        Assert.True((await db.CheckAsync()).IsClean);
        var e = await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await db.RepairAsync());
        Assert.Equal(SqliteResultCode.ReadOnly, e.SqliteErrorCode);
    }

    /// <summary>20 blocks (IDs 1 to 20: Hash(i), size 1000 + i % 3) and 5 blocksets (blocks 4s to 4s + 4; the last has 4), committed.</summary>
    private async Task<IBlockDatabase> Filled(string provider, string name, BlockLayout layout, Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = _folder.File(name), Index = { Layout = layout } };
        configure?.Invoke(options);
        var db = BlockDatabase.Open(options);
        await using var session = await db.OpenSessionAsync();
        var blocks = Enumerable.Range(0, 20).Select(i => TestData.Block(i, 1000 + (i % 3))).ToArray();
        foreach (var block in blocks)
        {
            await session.SelectXorInsertAsync(block);
        }

        for (var set = 0; set < 5; set++)
        {
            await session.AddBlocksetAsync(blocks.Skip(set * 4).Take(5).ToArray());
        }

        await session.CommitAsync();
        return db;
    }
}
