namespace BlockDb.Tests.Volumes;

/// <summary>
/// Volumes, for every provider and layout, PostgreSQL included (<see cref="ConformanceTestBase.ProviderMatrix"/>):
/// registered, found and moved through their states forward only; new blocks recorded in their volume while a known
/// block keeps its own; a volume deleted only once its blocks are moved or collected, and one the same transaction
/// sets <see cref="VolumeState.Deleting"/> receiving no more blocks.
/// </summary>
public sealed class VolumeTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Volumes_are_registered_found_and_move_through_their_states_forward_only(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        var a = await session.RegisterVolumeAsync("b-0001.zip");
        var b = await session.RegisterVolumeAsync("b-0002.zip", VolumeState.Uploaded);
        Assert.NotEqual(a, b);
        Assert.Equal(new VolumeInfo(a, "b-0001.zip", VolumeState.Temporary, null, 0, 0, 0, 0), await session.GetVolumeAsync(a));
        Assert.Equal(b, (await session.FindVolumeAsync("b-0002.zip"))?.Id);
        Assert.Null(await session.FindVolumeAsync("nope.zip"));

        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.RegisterVolumeAsync("b-0001.zip"));
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.RegisterVolumeAsync(string.Empty));
        await Assert.ThrowsAsync<ArgumentException>(async () => await session.RegisterVolumeAsync(new string('x', 1025)));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.RegisterVolumeAsync("c.zip", (VolumeState)42));
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.GetVolumeAsync(999));
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.SetVolumeStateAsync(999, VolumeState.Uploaded));

        await session.SetVolumeStateAsync(a, VolumeState.Uploading);
        await session.SetVolumeStateAsync(a, VolumeState.Verified, size: 52_428_800);
        Assert.Equal((VolumeState.Verified, (long?)52_428_800), ((await session.GetVolumeAsync(a)).State, (await session.GetVolumeAsync(a)).Size));
        var back = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SetVolumeStateAsync(a, VolumeState.Temporary));
        Assert.Contains("cannot go from Verified to Temporary", back.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SetVolumeStateAsync(a, VolumeState.Deleted));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.SetVolumeStateAsync(a, VolumeState.Verified, size: -1));
        Assert.Equal(VolumeState.Verified, (await session.GetVolumeAsync(a)).State);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task New_blocks_are_recorded_in_their_volume_and_a_known_block_keeps_its_own(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var first = await session.RegisterVolumeAsync("b-0001.zip");
        var second = await session.RegisterVolumeAsync("b-0002.zip");
        var x = await session.SelectXorInsertAsync(TestData.Block(1, 100), first);
        var y = (await session.SelectXorInsertAsync(TestData.Block(2, 200), first)).Id;
        var again = await session.SelectXorInsertAsync(TestData.Block(1, 100), second);
        var none = await session.SelectXorInsertAsync(TestData.Block(3, 300));
        await session.CommitAsync();

        Assert.Equal(new SelectXorInsertResult(x.Id, false), again);
        Assert.Equal(new BlockInfo(x.Id, TestData.Block(1, 100), first), await session.GetBlockAsync(x.Id));
        Assert.Equal(first, (await session.GetBlockAsync(y)).VolumeId);
        Assert.Null((await session.GetBlockAsync(none.Id)).VolumeId);
        Assert.Equal(new VolumeInfo(first, "b-0001.zip", VolumeState.Temporary, null, 2, 300, 2, 300), await session.GetVolumeAsync(first));
        await Assert.ThrowsAsync<BlockNotFoundException>(async () => await session.GetBlockAsync(12345));

        // Unknown or deleted volumes receive nothing, and the batch keeps what it had.
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.SelectXorInsertAsync(TestData.Block(4, 10), 999));
        await session.SetVolumeStateAsync(second, VolumeState.Deleting);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SelectXorInsertAsync(TestData.Block(4, 10), second));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SelectXorInsertAsync(TestData.Block(4, 10), second));
        await session.CommitAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(4, 10)));
        Assert.Equal(3, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_volume_is_deleted_only_once_its_blocks_are_moved_or_collected(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        var old = await session.RegisterVolumeAsync("old", VolumeState.Verified);
        var fresh = await session.RegisterVolumeAsync("compacted");
        var live = (await session.SelectXorInsertAsync(TestData.Block(1, 10), old)).Id;
        var dead = (await session.SelectXorInsertAsync(TestData.Block(2, 10), old)).Id;
        await session.AddBlocksetAsync([live]);

        var refused = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SetVolumeStateAsync(old, VolumeState.Deleting));
        Assert.Contains("still holds blocks that blocksets reference", refused.Message, StringComparison.Ordinal);

        // Compaction: the live block moves to a new volume; a list naming an unknown block moves nothing.
        var unknown = await Assert.ThrowsAsync<BlockNotFoundException>(async () => await session.MoveBlocksAsync([live, 9999], fresh));
        Assert.Equal(1, unknown.Position);
        Assert.Equal(old, (await session.GetBlockAsync(live)).VolumeId);
        Assert.Equal(1, await session.MoveBlocksAsync([live], fresh));
        Assert.Equal(fresh, (await session.GetBlockAsync(live)).VolumeId);

        await session.SetVolumeStateAsync(old, VolumeState.Deleting);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.MoveBlocksAsync([live], old));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync([dead]));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync([TestData.Block(2, 10)]));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SetVolumeStateAsync(old, VolumeState.Deleted));
        Assert.Equal(1, (await session.DeleteUnreferencedBlocksAsync(old)).Blocks);
        await session.SetVolumeStateAsync(old, VolumeState.Deleted);
        await Assert.ThrowsAsync<BlockNotFoundException>(async () => await session.GetBlockAsync(dead));
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_volume_the_same_transaction_sets_deleting_receives_no_more_blocks(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("b-0001.zip");
        var target = await session.RegisterVolumeAsync("b-0002.zip");
        var first = await session.SelectXorInsertAsync(TestData.Block(1, 100), volume);
        Assert.True(first.Created);

        // Compaction in one transaction: the volume's only block is unreferenced, so it may go Deleting at once.
        await session.SetVolumeStateAsync(volume, VolumeState.Deleting);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SelectXorInsertAsync(TestData.Block(2, 200), volume));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SelectXorInsertAsync(TestData.Block(3, 300), volume));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.MoveBlocksAsync([first.Id], volume));
        await session.MoveBlocksAsync([first.Id], target);
        await session.SetVolumeStateAsync(target, VolumeState.Deleting);
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.MoveBlocksAsync([first.Id], target));
        await session.CommitAsync();
        Assert.Equal(1, (await session.GetCountsAsync()).Blocks);
        Assert.True((await db.CheckAsync()).IsClean);
    }
}
