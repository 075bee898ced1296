using static BlockDb.Tests.ErrorMessages.HugeInput;

namespace BlockDb.Tests.ErrorMessages;

/// <summary>
/// A huge argument to a repository call gives a short error message, on every provider and layout, through a session
/// and the shared session: the value is quoted through one bounded formatter, never whole.
/// </summary>
public sealed class HugeInputConformanceTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrixWithSessionKinds))]
    public async Task Every_call_that_takes_a_hash_or_a_name_gives_a_short_message_for_a_huge_one(string provider, BlockLayout layout, string repository)
    {
        Use(provider, layout);
        await OnEach(repository, async (reader, writer) =>
        {
            // AddBlocksetAsync takes its full hash as a BlockHash: a huge text one fails in BlockHash.Parse, as below.
            AssertShort(await Assert.ThrowsAsync<ArgumentException>(async () => await writer.SelectXorInsertAsync(BlockKey.Parse(Huge, 1))));
            AssertShort(await Assert.ThrowsAsync<ArgumentException>(async () => await reader.FindBlockAsync(BlockKey.Parse(Huge, 1))));
            AssertShort(await Assert.ThrowsAsync<ArgumentException>(async () => await reader.FindBlocksetAsync(BlockHash.Parse(Huge), 1)));
            AssertShort(await Assert.ThrowsAsync<ArgumentException>(async () => await writer.RegisterVolumeAsync(Huge)));
            AssertShort(await Assert.ThrowsAsync<ArgumentException>(async () => await reader.FindVolumeAsync(Huge)));

            // The longest name a volume can have, registered twice: the conflict quotes it, bounded too.
            var longest = new string('A', 1024);
            await writer.RegisterVolumeAsync(longest);
            AssertShort(await Assert.ThrowsAsync<BlockDbConflictException>(async () => await writer.RegisterVolumeAsync(longest)), 400);
        });
    }

    private async Task OnEach(string repository, Func<IBlockReader, IBlockWriter, Task> test)
    {
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        if (repository == "session")
        {
            await using var session = await db.OpenSessionAsync();
            await test(session, session);
        }
        else
        {
            await using var shared = db.OpenSharedSession();
            await test(shared, shared);
        }
    }
}
