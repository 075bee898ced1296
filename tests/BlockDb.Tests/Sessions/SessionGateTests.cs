namespace BlockDb.Tests.Sessions;

/// <summary>
/// A session runs one call at a time, for every provider and layout, PostgreSQL included: a second concurrent call is
/// refused, and a call cancelled before it starts writes nothing.
/// </summary>
public sealed class SessionGateTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_session_refuses_a_second_call_while_one_is_running(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var id = (await session.SelectXorInsertAsync(TestData.Block(1, 1))).Id;
        var volume = await session.RegisterVolumeAsync("v");
        Exception? reentrant = null;
        var ids = new CallbackList<long>([id, id], () =>
        {
            var pending = session.FindBlockAsync(TestData.Block(1, 1));
            reentrant = pending.IsFaulted ? pending.AsTask().Exception!.InnerException : null;
        });
        await session.MoveBlocksAsync(ids, volume); // reads the caller's list inside the call
        Assert.IsType<InvalidOperationException>(reentrant);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Cancellation_before_a_call_writes_nothing(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        using var cts = new CancellationTokenSource();
        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await session.SelectXorInsertAsync(TestData.Block(1, 1), cancellationToken: cts.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await db.OpenSessionAsync(cts.Token));
        Assert.Equal(0, (await session.GetCountsAsync()).Blocks);
    }
}
