using System.Diagnostics;

namespace BlockDb.Tests.SharedSession;

/// <summary>
/// <see cref="ISharedBlockSession"/>'s cancellation rule on every provider and layout: a write call that throws
/// <see cref="OperationCanceledException"/> wrote nothing, one that returns committed all of its writes, wherever the
/// cancellation falls (queued, in the middle of the call's statements, after them while its group commits).
/// </summary>
public sealed class CancelledSharedWriteTests : ConformanceTestBase
{
    private const int BlocksPerCall = 10_000;
    private const int Calls = 20;

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_cancelled_span_select_xor_insert_commits_none_of_its_blocks(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await CancelAtRandomAsync(static (shared, blocks, results, token) => shared.SelectXorInsertManyAsync(blocks, results, null, token).AsTask(), blockset: false);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_cancelled_one_call_file_commits_none_of_its_blocks_nor_its_blockset(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await CancelAtRandomAsync(static async (shared, blocks, results, token) =>
        {
            await shared.AddBlocksetAsync(blocks, results, default, null, token);
            return blocks.Length;
        }, blockset: true);
    }

    /// <summary>
    /// Runs <see cref="Calls"/> calls of new blocks, each cancelled after a random delay of a quarter to 1.25 times
    /// an uncancelled call's duration, and checks after each (once a later write has gone through the writer, so its group has committed)
    /// that the file holds all of the call's blocks when it returned and none of them when it was cancelled.
    /// </summary>
    private async Task CancelAtRandomAsync(Func<ISharedBlockSession, ReadOnlyMemory<BlockKey>, Memory<SelectXorInsertResult>, CancellationToken, Task<int>> call, bool blockset)
    {
        await using var db = Open(o =>
        {
            if (IsServer)
            {
                // Npgsql then does not wait for the server's answer to a cancel request. A token that fires while the
                // call reads results the server already committed ends it too (seldom: PostgreSqlWriteCancellationTests
                // makes that case certain).
                o.ConnectionString += ";Cancellation Timeout=-1";
            }
        });
        await using var shared = db.OpenSharedSession();
        var results = new SelectXorInsertResult[BlocksPerCall];
        Assert.Equal(BlocksPerCall, await call(shared, Blocks(0), results, CancellationToken.None)); // warm: code compiled, map loaded
        await BarrierAsync(shared, 0);
        var timer = Stopwatch.StartNew();
        Assert.Equal(BlocksPerCall, await call(shared, Blocks(Calls + 1), results, CancellationToken.None));
        var duration = Math.Max(4, (int)timer.ElapsedMilliseconds);
        await BarrierAsync(shared, Calls + 1);

        var random = new Random(21);
        var (returned, cancelled, lateCancels) = (0, 0, 0);
        for (var i = 1; i <= Calls; i++)
        {
            var before = await shared.GetCountsAsync();
            var blocks = Blocks(i);
            using var cts = new CancellationTokenSource(random.Next(duration / 4, (duration * 5 / 4) + 1));
            int? created;
            try
            {
                timer.Restart();
                created = await call(shared, blocks, results, cts.Token);

                // A load spike may have slowed the first timed call: the delays follow the fastest call seen.
                duration = Math.Max(4, Math.Min(duration, (int)timer.ElapsedMilliseconds));
            }
            catch (OperationCanceledException)
            {
                created = null;
            }

            await BarrierAsync(shared, i);
            var after = await shared.GetCountsAsync();
            if (created is { } count)
            {
                returned++;
                lateCancels += cts.IsCancellationRequested ? 1 : 0;
                Assert.Equal(BlocksPerCall, count);
                Assert.Equal(before.Blocks + BlocksPerCall + 1, after.Blocks);
                Assert.Equal(before.Blocksets + (blockset ? 1 : 0), after.Blocksets);
                var last = await shared.GetBlockAsync(results[BlocksPerCall - 1].Id);
                Assert.Equal(blocks.Span[^1].Hash, last.Block.Hash);
            }
            else
            {
                cancelled++;
                Assert.True(before.Blocks + 1 == after.Blocks, $"Call {i} was cancelled, yet {after.Blocks - before.Blocks - 1} of its {BlocksPerCall} blocks are in the index.");
                Assert.Equal(before.Blocksets, after.Blocksets);
            }
        }

        // The token must have fired before the end of some calls: thrown (SQLite: mostly in the middle of the writer's
        // statements), or completed after their writes were sent (a server).
        Assert.True(cancelled + lateCancels > 0, $"No call's token fired before the call ended (the fastest call took {duration} ms): the test proved nothing.");
        Assert.Equal(Calls, returned + cancelled);
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, $"Check after the cancelled calls: {check}");
    }

    /// <summary>A write queued after the call: once it completes, the writer has committed (or dropped) everything queued before it.</summary>
    private static async Task BarrierAsync(ISharedBlockSession shared, int call) =>
        Assert.True((await shared.SelectXorInsertAsync(new BlockKey(TestData.Bytes(-1 - call), 1))).Created);

    /// <summary>Call <paramref name="call"/>'s blocks: new ones, distinct from every other call's.</summary>
    private static ReadOnlyMemory<BlockKey> Blocks(int call) =>
        Enumerable.Range(call * BlocksPerCall, BlocksPerCall).Select(seed => TestData.Block(seed, 4096)).ToArray();
}
