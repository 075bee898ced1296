namespace BlockDb.Tests.Blocksets;

/// <summary>
/// <see cref="IBlockSession.AddBlocksetAsync"/> looks every block up and makes every refusal before its first write, and
/// then writes with no savepoint of its own (the layouts without blockset rules): a write that fails after that (here a
/// foreign unique index's <c>SQLITE_CONSTRAINT</c>, standing for a full disk or an I/O error) must leave nothing half written. The
/// call rolls the open batch back and says so (<see cref="BlockDbBatchRolledBackException"/>, the engine's SQLite code
/// kept); the session, its KeyMap map included, then writes the same files from scratch. Every SQLite provider and layout;
/// the failure is a foreign partial unique index (KeyMap refuses a file with foreign triggers), plain SQL on the file
/// created before the batch opens and dropped after the rollback.
/// </summary>
public sealed class OneCallFileWriteFailureTests : ConformanceTestBase
{
    /// <summary><see cref="ConformanceTestBase.Matrix"/> × the write that fails: a block's insert after another new block of the file, or an entry's after the new blocks and the blockset row.</summary>
    public static IEnumerable<object[]> MatrixWithFailingWrites() =>
        from pair in Matrix()
        from write in new[] { "block", "entry" }
        select new object[] { pair[0], pair[1], write };

    [Theory]
    [MemberData(nameof(MatrixWithFailingWrites))]
    public async Task A_write_that_fails_after_earlier_writes_of_the_file_rolls_back_the_batch_and_leaves_nothing_of_the_file(string provider, BlockLayout layout, string write) =>
        await FailingWriteRollsBackTheBatch(
            provider,
            layout,
            write == "block"
                ? """CREATE UNIQUE INDEX "RefuseBlock" ON "Block" ("Size") WHERE "Size" = 666"""
                : """CREATE UNIQUE INDEX "RefuseEntry" ON "BlocksetEntry" ("BlockID") WHERE "Index" = 20""",
            write == "block"
                ? [TestData.Block(3, 30), TestData.Block(4, 666), TestData.Block(1, 10)]

                // 21 entries, sixteen in one statement and then one by one: new blocks, a found one, repeats; the
                // twenty-first names the block the earlier file names at index 20 (below), which the index refuses.
                : [.. Enumerable.Range(0, 21).Select(i => i % 5 == 4 ? TestData.Block(1, 10) : TestData.Block(100 + (i % 7), 30))]);

    private async Task FailingWriteRollsBackTheBatch(string provider, BlockLayout layout, string index, BlockKey[] failing)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using (var setup = await db.OpenSessionAsync())
        {
            var v = await setup.RegisterVolumeAsync("v.zip", VolumeState.Uploaded);
            await setup.SelectXorInsertAsync(TestData.Block(1, 10), v);
            await setup.SelectXorInsertAsync(TestData.Block(666, 666), v);

            // A committed blockset whose entry at index 20 is the failing file's last block (the entry index's row).
            BlockKey[] named = [.. Enumerable.Repeat(TestData.Block(1, 10), 20), failing[^1]];
            await setup.AddBlocksetAsync(named, new SelectXorInsertResult[21], volumeId: v);
            await setup.CommitAsync();
        }

        using (var foreign = new RawSql(DbPath, provider))
        {
            foreign.Execute(index);
        }

        await using var session = await db.OpenSessionAsync();
        var volume = (await session.FindVolumeAsync("v.zip"))!.Id;
        var counts = await session.GetCountsAsync();
        var committed = (counts.Blocks, counts.Blocksets, counts.BlocksetEntries);
        BlockKey[] good = [TestData.Block(1, 10), TestData.Block(2, 20)];
        await session.AddBlocksetAsync(good, new SelectXorInsertResult[2], volumeId: volume);
        Assert.Equal(2, session.PendingWrites); // block 2 and the blockset

        var lost = await Assert.ThrowsAsync<BlockDbBatchRolledBackException>(
            async () => await session.AddBlocksetAsync(failing, new SelectXorInsertResult[failing.Length], volumeId: volume));
        Assert.Equal(SqliteResultCode.Constraint, lost.SqliteErrorCode);
        Assert.True(lost.LostWrites >= 3, $"lost {lost.LostWrites}: the earlier file's two writes and at least one of the failed call's");
        Assert.Equal(0, session.PendingWrites);

        // Only what was committed before the batch: no block, blockset or entry of either file.
        using (var foreign = new RawSql(DbPath, provider))
        {
            Assert.Equal(committed, (foreign.Scalar("""SELECT COUNT(*) FROM "Block" """), foreign.Scalar("""SELECT COUNT(*) FROM "Blockset" """), foreign.Scalar("""SELECT COUNT(*) FROM "BlocksetEntry" """)));
            foreign.Execute("""DROP INDEX IF EXISTS "RefuseBlock" """);
            foreign.Execute("""DROP INDEX IF EXISTS "RefuseEntry" """);
        }

        // The session (and KeyMap's map) forgot the rolled-back blocks: the same files create them again.
        var goodResults = new SelectXorInsertResult[2];
        var goodId = await session.AddBlocksetAsync(good, goodResults, volumeId: volume);
        var results = new SelectXorInsertResult[failing.Length];
        var failedId = await session.AddBlocksetAsync(failing, results, volumeId: volume);
        await session.CommitAsync();
        Assert.Equal([false, true], goodResults.Select(r => r.Created));
        var stored = new[] { TestData.Block(1, 10), TestData.Block(666, 666), failing[^1] };
        var firsts = failing.Select((key, i) => failing.AsSpan(0, i).IndexOf(key) < 0 && !stored.Contains(key)).ToArray();
        Assert.Equal(firsts, results.Select(r => r.Created));
        Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(failedId)).Select(b => b.BlockId));
        Assert.Equal(failing.Sum(b => b.Size), (await session.GetBlocksetAsync(failedId)).Length);
        Assert.Equal(goodResults.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(goodId)).Select(b => b.BlockId));
        Assert.Equal(new BlockDbCounts(committed.Blocks + goodResults.Concat(results).Count(r => r.Created), committed.Blocksets + 2, committed.BlocksetEntries + 2 + failing.Length), await session.GetCountsAsync());
        Assert.True((await db.CheckAsync()).IsClean);
    }
}
