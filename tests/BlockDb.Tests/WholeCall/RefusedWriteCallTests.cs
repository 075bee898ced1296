using System.Diagnostics;

namespace BlockDb.Tests.WholeCall;

/// <summary>
/// A write call that throws leaves nothing of itself, in every session kind: the caller reads nothing from its results,
/// so a block it created and kept would be uploaded by no one (a later call finds it, <c>Created = false</c>). The batch
/// before the call stays. Every provider and layout (<see cref="ConformanceTestBase.ProviderMatrix"/>), in a batch and
/// with a commit after every write.
/// </summary>
public sealed class RefusedWriteCallTests : ConformanceTestBase
{
    /// <summary><see cref="ConformanceTestBase.ProviderMatrix"/> × the batch size (0: commits only when asked; 1: after every write).</summary>
    public static IEnumerable<object[]> ProviderMatrixWithBatches() =>
        from pair in ProviderMatrix()
        from commitEvery in new[] { 0, 1 }
        select new object[] { pair[0], pair[1], commitEvery };

    [Theory]
    [MemberData(nameof(ProviderMatrixWithBatches))]
    public async Task A_file_refused_for_a_block_in_a_deleting_volume_leaves_none_of_its_new_blocks_and_a_later_file_creates_them(string provider, BlockLayout layout, int commitEvery)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = commitEvery);
        await using var session = await db.OpenSessionAsync();
        var live = await session.RegisterVolumeAsync("live.zip", VolumeState.Uploaded);
        var doomed = await session.RegisterVolumeAsync("doomed.zip", VolumeState.Uploaded);
        await session.SelectXorInsertAsync(TestData.Block(9, 100), doomed);
        await session.SetVolumeStateAsync(doomed, VolumeState.Deleting);
        await session.CommitAsync();

        // An earlier write of the batch: it stays when a later call fails.
        var earlier = await session.SelectXorInsertAsync(TestData.Block(5, 100), live);
        BlockKey[] file = [TestData.Block(1, 100), TestData.Block(2, 100), TestData.Block(1, 100), TestData.Block(9, 100)];
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync(file, new SelectXorInsertResult[4], volumeId: live));
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 100)));
        Assert.Null(await session.FindBlockAsync(TestData.Block(2, 100)));

        var results = new SelectXorInsertResult[2];
        var blocksetId = await session.AddBlocksetAsync(new[] { TestData.Block(1, 100), TestData.Block(2, 100) }, results, volumeId: live);
        Assert.All(results, r => Assert.True(r.Created));
        await session.CommitAsync();
        Assert.Equal(earlier.Id, await session.FindBlockAsync(TestData.Block(5, 100)));
        Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(blocksetId)).Select(b => b.BlockId));
        Assert.Equal(new BlockDbCounts(4, 1, 2), await session.GetCountsAsync());
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_file_refused_for_a_length_past_the_largest_leaves_none_of_its_new_blocks(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var earlier = await session.SelectXorInsertAsync(TestData.Block(5, 100));
        BlockKey[] file = [TestData.Block(1, 100), TestData.Block(2, long.MaxValue)];
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.AddBlocksetAsync(file, new SelectXorInsertResult[2]));
        Assert.Null(await session.FindBlockAsync(file[0]));
        Assert.Null(await session.FindBlockAsync(file[1]));
        await session.CommitAsync();
        Assert.Equal(earlier.Id, await session.FindBlockAsync(TestData.Block(5, 100)));
        Assert.Equal(new BlockDbCounts(1, 0, 0), await session.GetCountsAsync());
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_span_select_xor_insert_cancelled_between_blocks_leaves_none_of_its_blocks(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await CancelMidCallAsync(static (session, blocks, results, volume, token) => session.SelectXorInsertManyAsync(blocks, results, volume, token).AsTask());
    }

    private const int BlocksPerCall = 3000;

    private const int Calls = 12;

    /// <summary>
    /// Calls of <see cref="BlocksPerCall"/> new blocks each, in one batch, with a token that fires at a random time within
    /// about the length of a call: a call that throws <see cref="OperationCanceledException"/> leaves no block of its own,
    /// a call that returns leaves all of them, and the batch's earlier writes commit.
    /// </summary>
    private async Task CancelMidCallAsync(Func<IBlockSession, ReadOnlyMemory<BlockKey>, Memory<SelectXorInsertResult>, long, CancellationToken, Task<int>> call)
    {
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("live.zip", VolumeState.Uploaded);
        var results = new SelectXorInsertResult[BlocksPerCall];
        Assert.Equal(BlocksPerCall, await call(session, Blocks(0), results, volume, CancellationToken.None)); // warm
        var timer = Stopwatch.StartNew();
        Assert.Equal(BlocksPerCall, await call(session, Blocks(Calls + 1), results, volume, CancellationToken.None));
        var duration = Math.Max(4, (int)timer.ElapsedMilliseconds);

        var random = new Random(32);
        var (returned, cancelled, expected) = (0, 0, 2L * BlocksPerCall);
        for (var i = 1; i <= Calls; i++)
        {
            // The last calls fire early when none was cancelled yet: on a loaded machine a call can run faster than the
            // warm one measured, so every timer in the call's length could fire after its call returned.
            var (low, high) = cancelled == 0 && i > Calls - 3 ? (1, Math.Max(2, duration / 8)) : (duration / 8, duration + 1);
            using var cts = new CancellationTokenSource(random.Next(low, high));
            try
            {
                await call(session, Blocks(i), results, volume, cts.Token);
                returned++;
                expected += BlocksPerCall;
            }
            catch (OperationCanceledException)
            {
                cancelled++;
                Assert.Null(await session.FindBlockAsync(Blocks(i).Span[0]));
            }

            var blocks = (await session.GetCountsAsync()).Blocks;
            Assert.True(blocks == expected, $"Call {i} ({(cts.IsCancellationRequested ? "cancelled" : "not cancelled")}): {blocks - expected} blocks more than the calls that returned created.");
        }

        Assert.True(cancelled > 0, $"No call was cancelled (a call took {duration} ms): the test proved nothing.");
        await session.CommitAsync();
        Assert.Equal(expected, (await session.GetCountsAsync()).Blocks);
        Assert.Equal(Calls, returned + cancelled);
    }

    private static ReadOnlyMemory<BlockKey> Blocks(int call) =>
        Enumerable.Range(0, BlocksPerCall).Select(j => TestData.Block((call * BlocksPerCall) + j + 1, 100)).ToArray();
}
