using Xunit.Abstractions;

namespace BlockDb.Tests.SharedSession;

/// <summary>
/// A read-only database refuses every write call with <see cref="BlockDbReadOnlyException"/>, on a session and on the
/// shared session alike, whether the block exists or not.
/// </summary>
public sealed class ReadOnlySharedSessionTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    [Fact]
    public async Task A_read_only_shared_session_refuses_select_xor_insert_like_a_read_only_session()
    {
        await using (var db = Open("ro.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            await SeedAsync(session, 3);
        }

        await using var readOnly = Open("ro.db", o => o.ReadOnly = true);
        await using (var session = await readOnly.OpenSessionAsync())
        {
            // The session refuses every write call, existing block or not.
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await session.SelectXorInsertAsync(TestData.Block(0, 10)));
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await session.SelectXorInsertAsync(TestData.Block(99, 10)));
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await session.SelectXorInsertAsync(TestData.Block(99, 10)));
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await session.AddBlocksetAsync([TestData.Block(0, 10)]));
        }

        await using var shared = readOnly.OpenSharedSession();
        await Assert.ThrowsAsync<BlockDbReadOnlyException>(() => shared.SelectXorInsertAsync(TestData.Block(99, 10)).AsTask());
        await Assert.ThrowsAsync<BlockDbReadOnlyException>(() => shared.AddBlocksetAsync([TestData.Block(0, 10)]).AsTask());
        var existing = await Record.ExceptionAsync(() => shared.SelectXorInsertAsync(TestData.Block(0, 10)).AsTask());
        Assert.True(existing is BlockDbReadOnlyException, $"The read-only shared session answered SelectXorInsertAsync for an existing block ({existing?.GetType().Name ?? "no exception"}), where a read-only session refuses the same call.");
    }
}
