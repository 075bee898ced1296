namespace BlockDb.Tests.Blocksets;

/// <summary>
/// The one-call file that writes with no savepoint: a refusal (here KeyMap's ID limit) comes before its writes and does
/// not roll the open batch back, on a session and on the shared session, and its results are those of one
/// select-xor-insert per block.
/// </summary>
public sealed class OneCallFileRefusalAndResultTests : ConformanceTestBase
{
    public static IEnumerable<object[]> KeyMapMatrix() =>
        Matrix().Where(pair => (BlockLayout)pair[1] == BlockLayout.KeyMap);

    public static IEnumerable<object[]> MatrixWithSizes() =>
        from pair in Matrix()
        from size in new[] { 0, 1, 2, 16, 17, 33, 256, 257, 600 }
        select new object[] { pair[0], pair[1], size };

    /// <summary>
    /// KeyMap's ID limit is a refusal ("Nothing was written"), and a single select-xor-insert that meets it keeps the
    /// batch. A one-call file meets it in its insert phase (after every check), with no savepoint around it.
    /// </summary>
    [Theory]
    [MemberData(nameof(KeyMapMatrix))]
    public async Task KeyMap_id_limit_met_by_a_one_call_file_refuses_the_call_and_keeps_the_batch(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var volume = await PrepareWithMaxBlockIdAsync(provider, 4294967294);

        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var earlier = await session.SelectXorInsertAsync(TestData.Block(2, 20), volume);
        Assert.Equal(4294967295L, earlier.Id);
        Assert.Equal(1, session.PendingWrites);

        // The single call: refused, the batch kept.
        var single = await Record.ExceptionAsync(async () => await session.SelectXorInsertAsync(TestData.Block(3, 30), volume));
        Assert.NotNull(single);
        Assert.IsNotType<BlockDbBatchRolledBackException>(single);
        Assert.Equal(1, session.PendingWrites);

        // The one-call file with the same new block: must be refused the same way, the batch kept.
        BlockKey[] file = [TestData.Block(1, 10), TestData.Block(3, 30)];
        var refused = await Record.ExceptionAsync(async () => await session.AddBlocksetAsync(file, new SelectXorInsertResult[2], volumeId: volume));
        Assert.NotNull(refused);
        Assert.True(
            refused is not BlockDbBatchRolledBackException,
            $"The ID limit (a refusal; the single call keeps the batch) rolled the open batch back: {refused.GetType().Name}: {refused.Message}");
        Assert.Equal(1, session.PendingWrites);
        await session.CommitAsync();
        Assert.Equal(earlier.Id, await session.FindBlockAsync(TestData.Block(2, 20)));
    }

    /// <summary>The limit counts a file's distinct new blocks: a file whose new blocks (repeated) fit in the last IDs goes in.</summary>
    [Theory]
    [MemberData(nameof(KeyMapMatrix))]
    public async Task KeyMap_a_file_that_fits_the_last_ids_exactly_goes_in(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var volume = await PrepareWithMaxBlockIdAsync(provider, 4294967293);

        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        BlockKey[] file = [TestData.Block(3, 30), TestData.Block(1, 10), TestData.Block(3, 30), TestData.Block(4, 40), TestData.Block(4, 40)];
        var results = new SelectXorInsertResult[file.Length];
        await session.AddBlocksetAsync(file, results, volumeId: volume);
        Assert.Equal(new[] { 4294967294L, 1, 4294967294L, 4294967295L, 4294967295L }, results.Select(r => r.Id));
        Assert.Equal(new[] { true, false, false, true, false }, results.Select(r => r.Created));
        await Assert.ThrowsAsync<BlockDbException>(async () => await session.AddBlocksetAsync(new[] { TestData.Block(5, 50) }, new SelectXorInsertResult[1], volumeId: volume));
        Assert.Equal(3, session.PendingWrites);
        await session.CommitAsync();
        Assert.Equal(new BlockDbCounts(3, 1, 5), await session.GetCountsAsync());
    }

    /// <summary>The same in the shared session: one caller's refused file must not fail the other callers' acknowledged-to-be writes.</summary>
    [Theory]
    [MemberData(nameof(KeyMapMatrix))]
    public async Task KeyMap_id_limit_met_by_a_shared_one_call_file_fails_only_that_call(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var volume = await PrepareWithMaxBlockIdAsync(provider, 4294967294);

        await using var db = Open();
        await using var shared = db.OpenSharedSession();
        BlockKey[] file = [TestData.Block(1, 10), TestData.Block(3, 30), TestData.Block(4, 40)];

        // Another caller's write queued with the file (the last free ID): it must be acknowledged whatever the file does.
        var other = shared.SelectXorInsertAsync(TestData.Block(2, 20), volume).AsTask();
        var refused = await Record.ExceptionAsync(async () => await shared.AddBlocksetAsync(file, new SelectXorInsertResult[3], volumeId: volume));
        var otherError = await Record.ExceptionAsync(() => other);
        Assert.NotNull(refused);
        Assert.True(refused is not BlockDbBatchRolledBackException, $"the refused file: {refused.GetType().Name}: {refused.Message}");
        Assert.True(otherError is null, $"another caller's write: {otherError?.GetType().Name}: {otherError?.Message}");
    }

    /// <summary>
    /// A file of <paramref name="size"/> blocks mixing blocks stored before (committed and in the open batch), new
    /// blocks, in-file repeats of new and found blocks, and one hash at two sizes: its results and entries equal those of
    /// one select-xor-insert per block in order on a twin database.
    /// </summary>
    [Theory]
    [MemberData(nameof(MatrixWithSizes))]
    public async Task A_mixed_file_gives_the_results_of_one_select_xor_insert_per_block(string provider, BlockLayout layout, int size)
    {
        Use(provider, layout);
        var file = Enumerable.Range(0, size).Select(i => (i % 5) switch
        {
            0 => TestData.Block(i / 5 % 3, 10),            // committed before
            1 => TestData.Block(1000 + (i % 11), 30),      // new, repeated every 11*5
            2 => TestData.Block(1000 + (i % 11), 40),      // same hashes at another size
            3 => TestData.Block(2000 + i, 50),             // new, once
            _ => TestData.Block(500, 60),                  // in the open batch
        }).ToArray();

        async Task<(SelectXorInsertResult[] Results, long[] Entries, long Length, BlockDbCounts Counts)> Run(string path, bool oneCall)
        {
            await using var db = Open(o =>
            {
                o.DataSource = path;
                o.Batching.CommitEvery = 0;
            });
            await using var session = await db.OpenSessionAsync();
            var v = await session.RegisterVolumeAsync("v.zip", VolumeState.Uploaded);
            for (var s = 0; s < 3; s++)
            {
                await session.SelectXorInsertAsync(TestData.Block(s, 10), v);
            }

            await session.CommitAsync();
            await session.SelectXorInsertAsync(TestData.Block(500, 60), v);
            await session.SelectXorInsertAsync(TestData.Block(501, 60), v);
            var results = new SelectXorInsertResult[size];
            long blocksetId;
            if (oneCall)
            {
                blocksetId = await session.AddBlocksetAsync(file, results, volumeId: v);
            }
            else
            {
                for (var i = 0; i < size; i++)
                {
                    results[i] = await session.SelectXorInsertAsync(file[i], v);
                }

                blocksetId = await session.AddBlocksetAsync(file, new SelectXorInsertResult[size], volumeId: v);
            }

            await session.CommitAsync();
            var entries = (await session.ListBlocksetBlocksAsync(blocksetId)).Select(b => b.BlockId).ToArray();
            var length = (await session.GetBlocksetAsync(blocksetId)).Length;
            Assert.True((await db.CheckAsync()).IsClean);
            return (results, entries, length, await session.GetCountsAsync());
        }

        var twin = await Run(Folder.File("twin.db"), oneCall: false);
        var one = await Run(DbPath, oneCall: true);
        Assert.Equal(twin.Results, one.Results);
        Assert.Equal(one.Results.Select(r => r.Id), one.Entries);
        Assert.Equal(twin.Entries, one.Entries);
        Assert.Equal(file.Sum(b => b.Size), one.Length);
        Assert.Equal(twin.Counts, one.Counts);
    }

    /// <summary>A KeyMap file with a volume and one committed block (ID 1) whose highest block ID is then set to <paramref name="maxBlockId"/> (raising it is what BlockDb itself does); the volume's ID.</summary>
    private async Task<long> PrepareWithMaxBlockIdAsync(string provider, long maxBlockId)
    {
        long volume;
        await using (var setup = Open(o => o.Batching.CommitEvery = 0))
        await using (var s = await setup.OpenSessionAsync())
        {
            volume = await s.RegisterVolumeAsync("v.zip", VolumeState.Uploaded);
            await s.SelectXorInsertAsync(TestData.Block(1, 10), volume);
            await s.CommitAsync();
        }

        using var raw = new RawSql(DbPath, provider);
        raw.Execute($"""UPDATE "BlockDbState" SET "MaxBlockId" = {maxBlockId}""");
        return volume;
    }
}
