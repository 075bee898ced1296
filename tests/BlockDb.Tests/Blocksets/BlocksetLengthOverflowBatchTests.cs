namespace BlockDb.Tests.Blocksets;

/// <summary>
/// A blockset whose length in bytes would not fit a 64-bit integer is refused with
/// <see cref="ArgumentOutOfRangeException"/> before anything of it is written, on every provider and layout and whether
/// its blocks are named by key or by ID: the session's open batch (its earlier writes) stays intact and commits, and
/// the shared session gives the same typed error.
/// </summary>
public sealed class BlocksetLengthOverflowBatchTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix))]
    public async Task A_blockset_too_long_for_its_length_is_refused_as_out_of_range_and_the_open_batch_commits(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var big = new[] { TestData.Block(1, long.MaxValue), TestData.Block(2, long.MaxValue) };
        await using (var db = Open(o => o.Batching.CommitEvery = 0))
        {
            await using var session = await db.OpenSessionAsync();
            var ids = new[] { (await session.SelectXorInsertAsync(big[0])).Id, (await session.SelectXorInsertAsync(big[1])).Id };
            Assert.Equal(2, session.PendingWrites);

            var byKeys = await Record.ExceptionAsync(async () => await session.AddBlocksetAsync(big));
            var byIds = await Record.ExceptionAsync(async () => await session.AddBlocksetAsync(ids));
            var inOneCall = await Record.ExceptionAsync(async () => await session.AddBlocksetAsync(big, new SelectXorInsertResult[2]));
            Assert.True(
                byKeys is ArgumentOutOfRangeException && byIds is ArgumentOutOfRangeException && inOneCall is ArgumentOutOfRangeException,
                $"by keys: {Describe(byKeys)}; by IDs: {Describe(byIds)}; in one call: {Describe(inOneCall)}");
            Assert.Equal(2, session.PendingWrites);
            await session.CommitAsync();

            await using var shared = db.OpenSharedSession();
            await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await shared.AddBlocksetAsync(big));
            await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await shared.AddBlocksetAsync(ids));
        }

        await using var reopened = Open();
        await using var reader = await reopened.OpenSessionAsync();
        Assert.Equal(new BlockDbCounts(2, 0, 0), await reader.GetCountsAsync());
    }

    private static string Describe(Exception? e) => e is null ? "no error" : $"{e.GetType().Name}: {e.Message}";
}
