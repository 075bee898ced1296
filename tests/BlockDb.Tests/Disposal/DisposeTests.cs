namespace BlockDb.Tests.Disposal;

/// <summary>
/// Disposing, for every provider and layout, PostgreSQL included: a session ends its open batch as configured, and a
/// database disposes its open sessions and releases the file.
/// </summary>
public sealed class DisposeTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(MatrixWithDisposeBehaviors), MemberType = typeof(ConformanceTestBase))]
    public async Task Disposing_a_session_ends_its_open_batch_as_configured(string provider, BlockLayout layout, DisposeBehavior onDispose, long expectedBlocks)
    {
        Use(provider, layout);
        await using (var db = Open(o => { o.Batching.CommitEvery = 0; o.Batching.OnDispose = onDispose; }))
        {
            await using (var session = await db.OpenSessionAsync())
            {
                await session.SelectXorInsertAsync(TestData.Block(1, 1));
                await session.CommitAsync();
                await session.SelectXorInsertAsync(TestData.Block(2, 1));
                await session.SelectXorInsertAsync(TestData.Block(3, 1));
            }
        }

        await using var reopened = Open();
        await using var check = await reopened.OpenSessionAsync();
        Assert.Equal(expectedBlocks, (await check.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Disposing_the_database_disposes_open_sessions_and_releases_the_file(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var db = Open(o => o.Batching.CommitEvery = 0);
        var session = await db.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1, 1));
        await db.DisposeAsync();

        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await session.FindBlockAsync(TestData.Block(1, 1)));
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await db.OpenSessionAsync());

        // Released: the file (or the server's tables) can be deleted and a new index created in its place.
        DeleteIndex();
        await using var fresh = Open();
        await using var s = await fresh.OpenSessionAsync();
        Assert.Equal(0, (await s.GetCountsAsync()).Blocks);
    }
}
