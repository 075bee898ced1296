namespace BlockDb.Tests.Import;

/// <summary>
/// What <see cref="IBlockDatabase.ImportBlocksetsAsync"/> refuses, on every SQLite provider and layout: a block of a
/// volume being deleted (also when the volume starts going between two transactions of one import), a block known by its
/// hash but with another size; each refusal rolls back the transaction in progress and keeps the committed ones, and
/// a blockset whose blocks are all in live volumes imports beside a going volume with its length from its blocks' sizes.
/// </summary>
public sealed class ImportBlocksetRefusalTests : ConformanceTestBase
{
    private static BlockKey Key(int i) => ImportTests.Block(i).Block;

    private static long Length(params int[] blocks) => blocks.Sum(i => Key(i).Size);

    private static ImportBlockset File(int fullHash, params int[] blocks) => new([.. blocks.Select(Key)], TestData.Bytes(fullHash));

    private static async IAsyncEnumerable<T> Stream<T>(IEnumerable<T> items)
    {
        foreach (var item in items)
        {
            await Task.Yield();
            yield return item;
        }
    }

    /// <summary>Blocks 0-9 in a live volume, 10-19 in one then set Deleting; returns (live, going).</summary>
    private async Task<(long Live, long Going)> BlocksInALiveAndAGoingVolume(IBlockDatabase db, bool deleteNow = true)
    {
        long live, going;
        await using (var session = await db.OpenSessionAsync())
        {
            live = await session.RegisterVolumeAsync("b-live.zip", VolumeState.Uploaded);
            going = await session.RegisterVolumeAsync("b-going.zip", VolumeState.Uploaded);
            await session.CommitAsync();
        }

        await db.ImportBlocksAsync(Stream(Enumerable.Range(0, 20).Select(i => ImportTests.Block(i, i < 10 ? live : going))));
        if (deleteNow)
        {
            await using var session = await db.OpenSessionAsync();
            await session.SetVolumeStateAsync(going, VolumeState.Deleting);
            await session.CommitAsync();
        }

        return (live, going);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_block_of_a_volume_being_deleted_is_refused_and_its_transaction_rolled_back_while_live_blocks_import(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await BlocksInALiveAndAGoingVolume(db);

        var live = await db.ImportBlocksetsAsync(Stream(new[] { File(1, 0, 1, 2, 1) }));
        Assert.Equal(1, live.Created);

        var refused = await Assert.ThrowsAsync<BlockDbConflictException>(async () =>
            await db.ImportBlocksetsAsync(Stream(new[] { File(2, 3, 4), File(3, 5, 12, 6) }), new ImportOptions { ItemsPerTransaction = 16 }));
        Assert.Contains("Block 1 of the blockset", refused.Message, StringComparison.Ordinal);
        Assert.Contains("being deleted", refused.Message, StringComparison.Ordinal);

        await using var reader = await db.OpenSessionAsync();
        var first = await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(1)), Length(0, 1, 2, 1));
        Assert.NotNull(first);
        Assert.Equal(Length(0, 1, 2, 1), (await reader.GetBlocksetAsync(first.Value)).Length);
        Assert.Null(await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(2)), Length(3, 4))); // the refused transaction's first blockset
        Assert.Equal(1, (await reader.GetCountsAsync()).Blocksets);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_volume_set_deleting_between_two_transactions_of_one_import_refuses_its_blocks_in_the_next(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        var (_, going) = await BlocksInALiveAndAGoingVolume(db, deleteNow: false);
        var progress = new SetDeletingAfterFirstCommit(() => Open(), going);

        // Transaction 1 meets no going volume (a volume goes only while no blockset names its blocks); transaction 2
        // names a block of the volume set Deleting after transaction 1 committed.
        var refused = await Assert.ThrowsAsync<BlockDbConflictException>(async () =>
            await db.ImportBlocksetsAsync(Stream(new[] { File(1, 0), File(2, 1), File(3, 2), File(4, 13) }), new ImportOptions { ItemsPerTransaction = 2, Progress = progress }));
        Assert.Contains("being deleted", refused.Message, StringComparison.Ordinal);
        Assert.True(progress.Done);

        await using var reader = await db.OpenSessionAsync();
        Assert.NotNull(await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(2)), Length(1)));
        Assert.Null(await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(3)), Length(2)));
        Assert.Equal(2, (await reader.GetCountsAsync()).Blocksets);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_block_known_by_hash_with_another_size_is_not_found_and_nothing_of_its_transaction_is_kept(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await BlocksInALiveAndAGoingVolume(db, deleteNow: false);
        var resized = new BlockKey(Key(4).Hash, Key(4).Size + 1);

        var notFound = await Assert.ThrowsAsync<BlockNotFoundException>(async () =>
            await db.ImportBlocksetsAsync(Stream(new[] { File(1, 0), new ImportBlockset([Key(3), resized], TestData.Bytes(2)) })));
        Assert.Equal(1, notFound.Position);

        await using var reader = await db.OpenSessionAsync();
        Assert.Equal(0, (await reader.GetCountsAsync()).Blocksets);
    }

    private sealed class SetDeletingAfterFirstCommit(Func<IBlockDatabase> open, long volumeId) : IProgress<ImportProgress>
    {
        public bool Done { get; private set; }

        public void Report(ImportProgress value)
        {
            if (value.Transactions != 1)
            {
                return;
            }

            using var db = open();
            using var session = db.OpenSessionAsync().AsTask().GetAwaiter().GetResult();
            session.SetVolumeStateAsync(volumeId, VolumeState.Deleting).AsTask().GetAwaiter().GetResult();
            session.CommitAsync().AsTask().GetAwaiter().GetResult();
            Done = true;
        }
    }
}
