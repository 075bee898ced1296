using BlockDb.Engine;

namespace BlockDb.Tests.Sessions;

/// <summary>
/// A call that arrives while the session's idle timer is inside the gate [G1] (its age commit: on PostgreSQL a server
/// round trip) waits for it asynchronously: the call returns a pending task at once, its thread free, and completes
/// once the commit has left. The age commit is held inside the gate through the timer's test seam, so the race is
/// deterministic. Every provider and layout, PostgreSQL included; the hot calls (find, select-xor-insert, which enter
/// without a state machine when the gate is idle) and an async one.
/// </summary>
public sealed class CallsBehindBackgroundWorkTests : ConformanceTestBase
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    public static IEnumerable<object[]> MatrixWithCalls() =>
        from pair in ProviderMatrix()
        from call in new[] { "find", "select-xor-insert", "counts" }
        select new object[] { pair[0], pair[1], call };

    [Theory]
    [MemberData(nameof(MatrixWithCalls))]
    public async Task A_call_meeting_the_age_commit_waits_for_it_without_blocking_its_thread(string provider, BlockLayout layout, string call)
    {
        Use(provider, layout);
        await using var db = Open(o => { o.Batching.CommitEvery = 0; o.Batching.CommitAfterMilliseconds = 1; });
        await using var session = await db.OpenSessionAsync();
        var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ((ISessionHandle)session).IdleTimer!.BeforeAgeCommit = () =>
        {
            held.TrySetResult();
            return release.Task;
        };

        Task<long>? running = null;
        var completedOnReturn = true;
        try
        {
            var id = (await session.SelectXorInsertAsync(TestData.Block(1, 10))).Id; // opens the batch: the timer fires and holds its commit
            await held.Task.WaitAsync(Wait);

            var caller = new Thread(() =>
            {
                var (task, completed) = Start(session, call);
                (running, completedOnReturn) = (task, completed);
            });
            caller.Start();
            Assert.True(caller.Join(Wait), $"{call} blocked its thread while the age commit was inside the gate");
            Assert.False(completedOnReturn, $"{call} completed while the age commit was still inside the gate");

            release.SetResult();
            var result = await running!.WaitAsync(Wait);
            Assert.Equal(call switch { "find" => id, "select-xor-insert" => await session.FindBlockAsync(TestData.Block(2, 10)), _ => 1 }, result);
        }
        finally
        {
            release.TrySetResult(); // the code before this fix blocked the caller's thread until here
        }
    }

    /// <summary>Starts <paramref name="call"/>: its task (the block ID, or the block count) and whether it had completed when the call returned.</summary>
    private static (Task<long> Task, bool CompletedOnReturn) Start(IBlockSession session, string call)
    {
        switch (call)
        {
            case "find":
                var find = session.FindBlockAsync(TestData.Block(1, 10));
                return (Id(find), find.IsCompleted);
            case "select-xor-insert":
                var insert = session.SelectXorInsertAsync(TestData.Block(2, 10));
                return (Id(insert), insert.IsCompleted);
            default:
                var counts = session.GetCountsAsync();
                return (Blocks(counts), counts.IsCompleted);
        }

        static async Task<long> Id<T>(ValueTask<T> task) => await task switch
        {
            long id => id,
            SelectXorInsertResult r => r.Id,
            var other => throw new InvalidOperationException($"unexpected {other}"),
        };

        static async Task<long> Blocks(ValueTask<BlockDbCounts> task) => (await task).Blocks;
    }
}
