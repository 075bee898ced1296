namespace BlockDb.Tests.Blocksets;

/// <summary>
/// <see cref="IBlockSession.AddBlocksetAsync"/> takes each block's volume from the store's own read
/// inside the write transaction instead of reading the row a second time: these try to make that answer stale. Every
/// SQLite provider and layout; a foreign writer is plain SQL on the file.
/// </summary>
public sealed class OneCallFileTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_block_whose_volume_a_foreign_writer_set_deleting_between_calls_is_refused(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var live = await session.RegisterVolumeAsync("live.zip", VolumeState.Uploaded);
        var doomed = await session.RegisterVolumeAsync("doomed.zip", VolumeState.Uploaded);
        await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(1), 100), live);
        await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(2), 100), doomed);

        // A first file finds both volumes fit, so nothing this session remembers may carry over to the next call.
        BlockKey[] file = [TestData.Block(1, 100), TestData.Block(2, 100), TestData.Block(3, 100)];
        await session.DeleteBlocksetAsync(await session.AddBlocksetAsync(file, new SelectXorInsertResult[3]));
        await session.CommitAsync();
        Assert.True(await session.FindBlockAsync(new BlockKey(TestData.Bytes(2), 100)) is not null); // a read snapshot is now held

        using (var foreign = new RawSql(DbPath, provider))
        {
            foreign.Execute($"""UPDATE "Remotevolume" SET "State" = 'Deleting' WHERE "ID" = {doomed}""");
        }

        var results = new SelectXorInsertResult[4];
        BlockKey[] again = [TestData.Block(1, 100), TestData.Block(4, 100), TestData.Block(1, 100), TestData.Block(2, 100)];
        var refused = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync(again, results));
        Assert.Contains("Block 3 ", refused.Message, StringComparison.Ordinal);
        await session.CommitAsync();

        var counts = await session.GetCountsAsync();
        Assert.Equal((0L, 0L), (counts.Blocksets, counts.BlocksetEntries));
        Assert.Equal(3, counts.Blocks); // the call is whole: its new block went with its blockset
        Assert.Null(await session.FindBlockAsync(TestData.Block(4, 100)));
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_volume_the_session_itself_set_deleting_in_its_open_transaction_is_refused(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var a = await session.RegisterVolumeAsync("a.zip", VolumeState.Uploaded);
        var b = await session.RegisterVolumeAsync("b.zip", VolumeState.Uploaded);
        await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(1), 100), a);
        await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(2), 100), b);
        BlockKey[] file = [TestData.Block(1, 100), TestData.Block(2, 100), TestData.Block(1, 100)];
        var first = await session.AddBlocksetAsync(file, new SelectXorInsertResult[3]);
        await session.DeleteBlocksetAsync(first);

        await session.SetVolumeStateAsync(b, VolumeState.Deleting);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync(file, new SelectXorInsertResult[3]));
        BlockKey[] onlyA = [TestData.Block(1, 100), TestData.Block(1, 100)];
        var kept = await session.AddBlocksetAsync(onlyA, new SelectXorInsertResult[2]);
        await session.CommitAsync();

        Assert.Equal(2, (await session.GetBlocksetAsync(kept)).BlockCount);
        Assert.Equal(1, (await session.GetCountsAsync()).Blocksets);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_block_a_foreign_writer_deleted_after_it_was_found_is_stored_again_and_named_by_its_new_row(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("v.zip", VolumeState.Uploaded);
        var old = await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(1), 100), volume);
        await session.CommitAsync();
        Assert.Equal(old.Id, await session.FindBlockAsync(new BlockKey(TestData.Bytes(1), 100))); // found, in a held read snapshot

        using (var foreign = new RawSql(DbPath, provider))
        {
            foreign.Execute($"""DELETE FROM "Block" WHERE "ID" = {old.Id}""");
        }

        var results = new SelectXorInsertResult[3];
        BlockKey[] file = [TestData.Block(1, 100), TestData.Block(2, 200), TestData.Block(1, 100)];
        var blocksetId = await session.AddBlocksetAsync(file, results, volumeId: volume);
        await session.CommitAsync();

        Assert.True(results[0].Created);
        if (layout == BlockLayout.KeyMap)
        {
            Assert.NotEqual(old.Id, results[0].Id); // KeyMap never hands an ID out twice; SQLite may reuse the deleted rowid
        }

        Assert.Equal(results[0].Id, foreign2Id());
        long foreign2Id()
        {
            using var raw = new RawSql(DbPath, provider);
            return raw.Scalar("""SELECT "ID" FROM "Block" """);
        }

        Assert.Equal(new SelectXorInsertResult(results[0].Id, false), results[2]);
        var listed = await session.ListBlocksetBlocksAsync(blocksetId);
        Assert.Equal(results.Select(r => r.Id), listed.Select(b => b.BlockId));
        Assert.Equal(volume, (await session.GetBlockAsync(results[0].Id)).VolumeId);
        Assert.Equal(400, (await session.GetBlocksetAsync(blocksetId)).Length);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_refused_file_rolls_back_only_its_blockset_and_a_rolled_back_batch_forgets_its_blocks(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var doomed = await session.RegisterVolumeAsync("doomed.zip", VolumeState.Uploaded);
        await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(9), 100), doomed);
        await session.SetVolumeStateAsync(doomed, VolumeState.Deleting);
        await session.CommitAsync();

        BlockKey[] good = [TestData.Block(1, 10), TestData.Block(2, 20)];
        BlockKey[] bad = [TestData.Block(3, 30), TestData.Block(9, 100)];
        var first = await session.AddBlocksetAsync(good, new SelectXorInsertResult[2]);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync(bad, new SelectXorInsertResult[2]));
        var second = await session.AddBlocksetAsync(good, new SelectXorInsertResult[2]);
        Assert.Equal(2, (await session.GetCountsAsync()).Blocksets);
        await session.RollbackAsync();

        // Nothing of the batch is left, and the same files write again from scratch.
        Assert.Equal(new BlockDbCounts(1, 0, 0), await session.GetCountsAsync());
        Assert.Null(await session.FindBlockAsync(new BlockKey(TestData.Bytes(1), 10)));
        var results = new SelectXorInsertResult[2];
        var again = await session.AddBlocksetAsync(good, results);
        await session.CommitAsync();
        Assert.All(results, r => Assert.True(r.Created));
        Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(again)).Select(b => b.BlockId));
        Assert.Equal(30, (await session.GetBlocksetAsync(again)).Length);
        Assert.Equal(new BlockDbCounts(3, 1, 2), await session.GetCountsAsync());
        Assert.True(first > 0 && second > first);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Duplicates_and_sizes_within_one_file_give_one_row_each_and_the_sum_of_sizes_committed_together(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1); // a commit after every write, were the call not one unit
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("v.zip", VolumeState.Uploaded);
        var known = await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(1), 100), volume);

        // The same hash at two sizes is two blocks; repeats inside the file name the first one's row.
        BlockKey[] file = [TestData.Block(1, 100), TestData.Block(1, 101), TestData.Block(2, 7), TestData.Block(1, 100), TestData.Block(2, 7), TestData.Block(1, 101)];
        var results = new SelectXorInsertResult[6];
        var blocksetId = await session.AddBlocksetAsync(file, results, volumeId: volume);
        Assert.Equal(0, session.PendingWrites);

        Assert.Equal([known.Id, results[1].Id, results[2].Id, known.Id, results[2].Id, results[1].Id], results.Select(r => r.Id));
        Assert.Equal([false, true, true, false, false, false], results.Select(r => r.Created));
        using var foreign = new RawSql(DbPath, provider);
        Assert.Equal(3, foreign.Scalar("""SELECT COUNT(*) FROM "Block" """));
        Assert.Equal(6, foreign.Scalar($"""SELECT COUNT(*) FROM "BlocksetEntry" WHERE "BlocksetID" = {blocksetId}"""));
        Assert.Equal(file.Sum(b => b.Size), foreign.Scalar($"""SELECT "Length" FROM "Blockset" WHERE "ID" = {blocksetId}"""));
        Assert.Equal(file.Sum(b => b.Size), foreign.Scalar($"""SELECT SUM(B."Size") FROM "BlocksetEntry" E JOIN "Block" B ON B."ID" = E."BlockID" WHERE E."BlocksetID" = {blocksetId}"""));
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Entries_written_sixteen_to_a_statement_keep_their_order_at_every_length(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        foreach (var count in new[] { 1, 15, 16, 17, 32, 33, 50 })
        {
            var blocks = Enumerable.Range(0, count).Select(i => TestData.Block((i * 7) % 23, 100 + (i % 3))).ToArray();
            var results = new SelectXorInsertResult[count];
            var oneCall = await session.AddBlocksetAsync(blocks, results);
            var byIds = await session.AddBlocksetAsync(results.Select(r => r.Id).ToArray());
            foreach (var id in new[] { oneCall, byIds })
            {
                var listed = await session.ListBlocksetBlocksAsync(id);
                Assert.Equal(Enumerable.Range(0, count), listed.Select(b => b.Index));
                Assert.Equal(results.Select(r => r.Id), listed.Select(b => b.BlockId));
                Assert.Equal(blocks.Sum(b => b.Size), (await session.GetBlocksetAsync(id)).Length);
            }
        }

        await session.CommitAsync();
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_volume_found_fit_then_set_deleting_in_the_same_transaction_takes_no_new_block(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("v.zip", VolumeState.Uploaded);
        await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(1), 100), volume); // the volume is found fit in this transaction
        await session.SetVolumeStateAsync(volume, VolumeState.Deleting);

        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync(new[] { TestData.Block(2, 100) }, new SelectXorInsertResult[1], volumeId: volume));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(3), 100), volume));
        await session.CommitAsync();
        Assert.Equal(new BlockDbCounts(1, 0, 0), await session.GetCountsAsync());
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Repeats_in_large_and_small_files_one_after_the_other_name_each_key_s_first_row(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();

        // A file of more new blocks than the session keeps its repeat finder for, then smaller ones that reuse it.
        foreach (var (count, offset) in new[] { (6_000, 0), (3, 10_000), (40, 20_000), (5_000, 30_000), (2, 40_000) })
        {
            var keys = Enumerable.Range(0, count).Select(i => TestData.Block(offset + (i % 7 == 6 ? i / 3 : i), 100)).ToArray();
            var results = new SelectXorInsertResult[count];
            var blocksetId = await session.AddBlocksetAsync(keys, results);
            var firsts = keys.Select((key, i) => Array.IndexOf(keys, key) == i).ToArray();
            Assert.Equal(firsts, results.Select(r => r.Created));
            Assert.Equal(keys.Select(key => results[Array.IndexOf(keys, key)].Id), results.Select(r => r.Id));
            Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(blocksetId)).Select(b => b.BlockId));
        }

        await session.CommitAsync();
        Assert.True((await db.CheckAsync()).IsClean);
    }
}
