using Xunit.Abstractions;

namespace BlockDb.Tests.Blocksets;

/// <summary>
/// A blockset whose length in bytes does not fit a long gets the documented, typed error on a session and on the
/// shared session, and writes nothing.
/// </summary>
public sealed class BlocksetLengthOverflowTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    /// <summary>
    /// Claim: bad input gets a documented, typed error (AddBlocksetAsync documents ArgumentException, BlockNotFound,
    /// OperationCanceled and BlockDbException). Mechanism: block sizes are accepted up to long.MaxValue each, and the
    /// blockset's Length is summed with checked(...) inside the write: two such blocks throw a bare OverflowException
    /// (neither an ArgumentException nor a BlockDbException), on the session and through the shared session. Nothing
    /// is written or lost (the savepoint is not reached), so this is about the contract only. Suggested fix: catch the
    /// overflow (or pre-check the sum in validation) and throw ArgumentOutOfRangeException naming the blocks.
    /// </summary>
    [Fact]
    public async Task A_blockset_whose_length_overflows_is_refused_with_ArgumentOutOfRangeException()
    {
        await using var db = Open("overflow.db", o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var big = new[] { TestData.Block(1, long.MaxValue), TestData.Block(2, long.MaxValue) };
        foreach (var b in big)
        {
            await session.SelectXorInsertAsync(b);
        }

        var error = await Record.ExceptionAsync(async () => await session.AddBlocksetAsync(big));
        await session.CommitAsync();
        await using var shared = db.OpenSharedSession();
        var sharedError = await Record.ExceptionAsync(() => shared.AddBlocksetAsync(big).AsTask());
        Assert.True(
            error is ArgumentOutOfRangeException && sharedError is ArgumentOutOfRangeException,
            $"Session: {error?.GetType().Name ?? "no error"}: {error?.Message}; shared session: {sharedError?.GetType().Name ?? "no error"}: {sharedError?.Message}");
    }
}
