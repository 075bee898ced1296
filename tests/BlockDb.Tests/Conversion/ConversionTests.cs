using BlockDb.Opening;

namespace BlockDb.Tests.Conversion;

/// <summary>
/// <see cref="BlockDbConverter"/>: a file copied into a new one of another layout keeps every volume, block, blockset and
/// entry at its ID, checks clean, and leaves nothing behind when it is refused or cancelled.
/// </summary>
public sealed class ConversionTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static TheoryData<BlockLayout, BlockLayout, string> Pairs()
    {
        var data = new TheoryData<BlockLayout, BlockLayout, string>();
        var providers = ProviderCatalog.SqliteNames;
        var i = 0;
        foreach (var from in LayoutCatalog.Created)
        {
            foreach (var to in LayoutCatalog.Created.Where(l => l != from))
            {
                data.Add(from, to, providers[i++ % providers.Count]);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task Every_row_is_copied_at_its_id_into_the_new_layout(BlockLayout from, BlockLayout to, string provider)
    {
        var source = Options("source.db", from, provider);
        long volume, blockset, empty;
        List<(long Id, string Hash, long Size)> blocks;
        await using (var db = BlockDatabase.Open(source))
        await using (var session = await db.OpenSessionAsync())
        {
            volume = await session.RegisterVolumeAsync("b-1.zip", VolumeState.Uploaded);
            for (var i = 0; i < 300; i++)
            {
                await session.SelectXorInsertAsync(TestData.Block(i, 100 + i), volume);
            }

            await session.SelectXorInsertAsync(TestData.Block(1000, 5)); // no volume
            blockset = await session.AddBlocksetAsync([TestData.Block(3, 103), TestData.Block(1000, 5), TestData.Block(3, 103)], TestData.Hash(-7));
            empty = await session.AddBlocksetAsync(Array.Empty<long>());
            await session.CommitAsync();
            using var raw = new RawSql(source.DataSource!);
            blocks = raw.Blocks();
        }

        var reports = new List<ConversionProgress>();
        var result = await BlockDbConverter.ConvertAsync(source, Options("target.db", to, "PInvoke"), new ConversionOptions { RowsPerTransaction = 100 }, new Progress(reports));

        Assert.True(result.Check.IsClean, result.Check.ToString());
        Assert.Equal((from, to, 1L, 301L, 0L, 2L, 3L), (result.SourceLayout, result.TargetLayout, result.Volumes, result.Blocks, result.MergedDuplicates, result.Blocksets, result.BlocksetEntries));
        Assert.Contains(reports, r => r.Table == "Block" && r.Rows == 301 && r.TotalRows == 301);

        await using var converted = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = _folder.File("target.db") });
        Assert.Equal(to, converted.Layout);
        await using var check = await converted.OpenSessionAsync();
        foreach (var (id, hash, size) in blocks)
        {
            Assert.Equal(id, await check.FindBlockAsync(BlockKey.Parse(hash, size)));
        }

        Assert.Equal(volume, (await check.GetBlockAsync(blocks[0].Id)).VolumeId);
        Assert.Null((await check.GetBlockAsync(blocks[^1].Id)).VolumeId);
        Assert.Equal(new VolumeInfo(volume, "b-1.zip", VolumeState.Uploaded, null, 300, 300 * 100 + (299 * 300 / 2), 299, 300 * 100 + (299 * 300 / 2) - 103), await check.GetVolumeAsync(volume));
        Assert.Equal(new[] { TestData.Hash(3), TestData.Hash(1000), TestData.Hash(3) }, (await check.ListBlocksetBlocksAsync(blockset)).Select(b => b.Block.Hash.ToString()));
        Assert.Equal(new BlocksetInfo(blockset, 211, TestData.Hash(-7), 3), await check.GetBlocksetAsync(blockset));
        Assert.Equal(0, (await check.GetBlocksetAsync(empty)).Length);

        // The new file keeps working: a new block gets a new ID above all copied ones.
        var next = await check.SelectXorInsertAsync(TestData.Block(5000, 1));
        Assert.True(next.Created && next.Id > blocks.Max(b => b.Id));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task The_collected_block_and_deleted_blockset_high_water_marks_are_carried_into_the_new_file(BlockLayout from, BlockLayout to, string provider)
    {
        var source = Options("marks.db", from, provider);
        long collected, deleted;
        await using (var db = BlockDatabase.Open(source))
        await using (var session = await db.OpenSessionAsync())
        {
            var kept = (await session.SelectXorInsertAsync(TestData.Block(1, 100))).Id;
            collected = (await session.SelectXorInsertAsync(TestData.Block(2, 200))).Id;
            await session.AddBlocksetAsync([kept]);
            deleted = await session.AddBlocksetAsync([kept, collected]);

            // A prune: the newest file's blockset goes (the highest blockset ID), then its own block (the highest block ID).
            await session.DeleteBlocksetAsync(deleted);
            Assert.Equal(1, (await session.DeleteUnreferencedBlocksAsync()).Blocks);
            await session.CommitAsync();
        }

        var result = await BlockDbConverter.ConvertAsync(source, Options("marks-target.db", to, "PInvoke"));
        Assert.True(result.Check.IsClean, result.Check.ToString());

        // An ID another session or process still held from the source names nothing in the new file either.
        await using var converted = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = _folder.File("marks-target.db") });
        await using var check = await converted.OpenSessionAsync();
        var block = await check.SelectXorInsertAsync(TestData.Block(3, 300));
        Assert.True(block.Created && block.Id > collected, $"block ID {block.Id} handed out at or below the collected ID {collected}");
        var blockset = await check.AddBlocksetAsync([block.Id]);
        Assert.True(blockset > deleted, $"blockset ID {blockset} handed out at or below the deleted ID {deleted}");
    }

    [Fact]
    public async Task A_duplicate_in_the_source_is_refused_unless_merging_is_asked_for()
    {
        var source = Options("dup.db", BlockLayout.TextHash, "PInvoke");
        await using (var db = BlockDatabase.Open(source))
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 10));
            await session.SelectXorInsertAsync(TestData.Block(2, 10));
        }

        long duplicate;
        using (var raw = new RawSql(source.DataSource!))
        {
            raw.Execute("""DROP INDEX "BlockHashSize" """); // as a foreign tool might
            raw.Execute($"""INSERT INTO "Block" ("Hash", "Size") VALUES ('{TestData.Hash(1)}', 10)""");
            duplicate = raw.Scalar("SELECT last_insert_rowid()");
            raw.Execute($"""INSERT INTO "Blockset" ("ID", "Length") VALUES (1, 20)""");
            raw.Execute($"""INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") VALUES (1, 0, {duplicate}), (1, 1, 2)""");
        }

        var target = Options("dup-keymap.db", BlockLayout.KeyMap, "PInvoke");
        var refused = await Assert.ThrowsAsync<BlockDbConflictException>(() => BlockDbConverter.ConvertAsync(source, target));
        Assert.Contains("duplicate", refused.Message, StringComparison.Ordinal);
        Assert.False(File.Exists(target.DataSource));

        var merged = await BlockDbConverter.ConvertAsync(source, target, new ConversionOptions { MergeDuplicates = true });
        Assert.True(merged.Check.IsClean, merged.Check.ToString());
        Assert.Equal((2L, 1L), (merged.Blocks, merged.MergedDuplicates));
        await using var db2 = BlockDatabase.Open(target);
        await using var s2 = await db2.OpenSessionAsync();
        Assert.Equal([1L, 2L], (await s2.ListBlocksetBlocksAsync(1)).Select(b => b.BlockId));
    }

    [Fact]
    public async Task An_existing_target_a_server_provider_or_a_cancellation_leaves_nothing_behind()
    {
        var source = Options("src.db", BlockLayout.TextHash, "MicrosoftData");
        await using (var db = BlockDatabase.Open(source))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = 0; i < 5000; i++)
            {
                await session.SelectXorInsertAsync(TestData.Block(i, 10));
            }
        }

        var before = await File.ReadAllBytesAsync(source.DataSource!);
        var existing = Options("exists.db", BlockLayout.KeyMap, "PInvoke");
        await File.WriteAllTextAsync(existing.DataSource!, "mine");
        await Assert.ThrowsAsync<BlockDbConflictException>(() => BlockDbConverter.ConvertAsync(source, existing));
        Assert.Equal("mine", await File.ReadAllTextAsync(existing.DataSource!));

        var target = Options("cancelled.db", BlockLayout.KeyMap, "SystemData");
        using var cts = new CancellationTokenSource();
        var progress = new Progress(null, () => cts.Cancel());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => BlockDbConverter.ConvertAsync(source, target, new ConversionOptions { RowsPerTransaction = 1000 }, progress, cancellationToken: cts.Token));
        Assert.False(File.Exists(target.DataSource));
        Assert.Equal(before, await File.ReadAllBytesAsync(source.DataSource!));
    }

    private BlockDbOptions Options(string name, BlockLayout layout, string provider) =>
        new() { Provider = provider, DataSource = _folder.File(name), Index = { Layout = layout }, Batching = { CommitEvery = 0 } };

    /// <summary>Records reports synchronously (System.Progress posts them to the thread pool).</summary>
    private sealed class Progress(List<ConversionProgress>? reports, Action? onReport = null) : IProgress<ConversionProgress>
    {
        public void Report(ConversionProgress value)
        {
            lock (this)
            {
                reports?.Add(value);
            }

            onReport?.Invoke();
        }
    }
}
