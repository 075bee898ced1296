using System.Collections.Concurrent;
using System.Diagnostics;
using BlockDb.Opening;

namespace BlockDb.Tests.Disposal;

/// <summary>
/// Every dispose returns only when the object is released, not only the first: two <c>DisposeAsync</c> calls and a
/// <c>Dispose</c> on another thread race while a long call runs inside the session, and as each returns the call must
/// have done all its work and (on SQLite) no descriptor of the file may be open; a session's batch must be committed.
/// The call's end is read from its results (its last block's result is written before it leaves the session), not from
/// its task, which completes on the caller's thread after the call has left: under load that thread can still be
/// waiting for a core when a correct dispose returns.
/// </summary>
public sealed class ConcurrentDisposeTests : ConformanceTestBase
{
    /// <summary>
    /// Blocks of the long call: one select-xor-insert call of this many new blocks runs for well over the 200 ms the
    /// test waits before the disposes (a server round trip per batch makes PostgreSQL's 300,000 as long as SQLite's 1e6).
    /// </summary>
    private static int Blocks(string provider) => provider == ProviderCatalog.PostgreSql ? 300_000 : 1_000_000;

    /// <summary>Each SQLite provider (the default layout: the race does not depend on it) and PostgreSQL when its test server runs.</summary>
    public static TheoryData<string, BlockLayout> Providers()
    {
        var data = new TheoryData<string, BlockLayout>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            data.Add(provider, BlockLayout.KeyMap);
        }

        if (PostgreSqlServer.Included)
        {
            data.Add(ProviderCatalog.PostgreSql, BlockLayout.BlobHash);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Every_concurrent_dispose_of_the_database_returns_only_after_the_call_in_flight_ended_and_the_file_is_closed(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var db = Open(o => o.Batching.CommitEvery = 0);
        var session = await db.OpenSessionAsync();
        var (call, results) = StartLongCall(session, Blocks(provider));

        var problems = await RaceDisposes(db.DisposeAsync, db.Dispose, () => Task.FromResult(
            Unfinished(results) ?? (OpenDescriptors() is > 0 and var open ? $"{open} descriptors of the file were still open" : null)));

        Assert.True(problems.Count == 0, string.Join("; ", problems));
        await call.WaitAsync(TimeSpan.FromMinutes(1)); // inside the session before the disposes, so it completed
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Every_concurrent_dispose_of_a_session_returns_only_after_its_batch_ended_and_its_connection_closed(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => { o.Batching.CommitEvery = 0; o.Batching.CommitAfterMilliseconds = null; o.Batching.OnDispose = DisposeBehavior.Commit; });
        var session = await db.OpenSessionAsync();
        var (call, results) = StartLongCall(session, Blocks(provider));

        var problems = await RaceDisposes(session.DisposeAsync, session.Dispose, () => Task.FromResult(
            Unfinished(results)
            ?? (session.PendingWrites is > 0 and var pending ? $"{pending} writes of its batch were not committed yet"
            : OpenDescriptors() is > 0 and var open ? $"{open} descriptors of the file were still open"
            : null)));

        Assert.True(problems.Count == 0, string.Join("; ", problems));
        await call.WaitAsync(TimeSpan.FromMinutes(1));
        await using var check = await db.OpenSessionAsync();
        Assert.Equal(Blocks(provider), (await check.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Every_concurrent_dispose_of_a_shared_session_returns_only_after_its_queued_writes_ended(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        var shared = db.OpenSharedSession();
        // Writes straight to the queue: span calls of one block (a one-block select-xor-insert reads first, and its own
        // task completes one continuation after its write's).
        var writes = Enumerable.Range(0, 5000).Select(i => shared.SelectXorInsertManyAsync(new[] { TestData.Block(i, 1 + i) }, new SelectXorInsertResult[1]).AsTask()).ToArray();

        var problems = await RaceDisposes(shared.DisposeAsync, shared.Dispose, () => Task.FromResult(
            writes.Count(w => !w.IsCompleted) is > 0 and var pending ? $"{pending} of its {writes.Length} writes were still pending" : null));

        Assert.True(problems.Count == 0, string.Join("; ", problems));
        await Task.WhenAll(writes); // queued before the dispose: every one committed
    }

    /// <summary>
    /// Starts one select-xor-insert call of <paramref name="blocks"/> new blocks on a thread of its own and returns once
    /// it is inside the session, so the disposes wait for it rather than refuse it: SQLite writes each block's result as
    /// it goes (the first is there), PostgreSQL's call returns its pending task only once inside, at its round trip.
    /// </summary>
    private static (Task Call, SelectXorInsertResult[] Results) StartLongCall(IBlockSession session, int blocks)
    {
        var keys = Enumerable.Range(0, blocks).Select(i => TestData.Block(i, 1 + (i % 1000))).ToArray();
        var results = new SelectXorInsertResult[blocks];
        var returned = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var call = Task.Run(async () =>
        {
            var running = session.SelectXorInsertManyAsync(keys, results);
            returned.SetResult();
            await running;
        });
        for (var waited = Stopwatch.StartNew(); results[0].Id == 0 && !returned.Task.IsCompleted;)
        {
            Assert.True(waited.Elapsed < TimeSpan.FromMinutes(1), "the long call did not enter the session within a minute");

            // Watch on this thread: an awaited delay resumes on the thread pool, which the other test classes running
            // in parallel can starve for longer than the whole call takes (CI saw SystemData's call end first).
            Thread.Sleep(1);
        }

        Assert.False(call.IsCompleted, "the call ended before the disposes began: it must be longer for this test to mean anything");
        return (call, results);
    }

    /// <summary>What is wrong when a dispose returned while the call was still inside: its last block has no result yet (null: it had done all its work).</summary>
    private static string? Unfinished(SelectXorInsertResult[] results) =>
        results[^1].Id == 0 ? $"the call in flight was still running ({results.Count(r => r.Id != 0)} of its {results.Length} blocks done)" : null;

    /// <summary>
    /// Two <c>DisposeAsync</c> calls and a <c>Dispose</c> on another thread at once; as each returns, <paramref name="problem"/>
    /// says what was not yet released (null: nothing). Returns every problem seen.
    /// </summary>
    private static async Task<List<string>> RaceDisposes(Func<ValueTask> disposeAsync, Action dispose, Func<Task<string?>> problem)
    {
        var problems = new ConcurrentQueue<string>();
        async Task Run(string who, Func<Task> disposal)
        {
            await disposal();
            if (await problem() is { } seen)
            {
                problems.Enqueue($"{who} returned while {seen}");
            }
        }

        await Task.WhenAll(
            Run("the first DisposeAsync", () => disposeAsync().AsTask()),
            Run("a second DisposeAsync", () => disposeAsync().AsTask()),
            Run("Dispose on another thread", () => Task.Run(dispose))).WaitAsync(TimeSpan.FromMinutes(3));
        return [.. problems];
    }

    private int OpenDescriptors() => IsServer ? 0 : new[] { "", "-wal", "-shm" }.Sum(suffix => ProcessFiles.Descriptors(DbPath + suffix));
}
