using System.Collections.Concurrent;
using System.Diagnostics;
using Xunit.Abstractions;

namespace BlockDb.Tests.Disposal;

/// <summary>
/// Disposing a session, a shared session or a database while calls run in it: dispose waits for or fails every call
/// in flight (a running repair and check included), a second concurrent dispose returns only when the first is done,
/// no call is left pending, and every write acknowledged before the dispose is in the file.
/// </summary>
public sealed class DisposeDuringCallsTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    // Defect 6: BlockDatabase.Dispose disposes each open session at once, even while a call runs inside it: the
    // call then runs on a closed connection instead of Dispose waiting for it.
    [Fact]
    public async Task Database_dispose_waits_for_a_call_running_in_a_session()
    {
        var path = Folder.File("inflight.db");
        var db = OpenWith(path, "PInvoke", o =>
        {
            o.Batching.CommitEvery = 0;
            o.Batching.OnDispose = DisposeBehavior.Commit;
        });
        var session = await db.OpenSessionAsync();
        var ids = new List<long>();
        for (var i = 1; i <= 3; i++)
        {
            ids.Add((await session.SelectXorInsertAsync(TestData.Block(i, 10))).Id);
        }

        // The call reads the caller's list of block IDs inside the session (MoveBlocksAsync): user code inside a call.
        var volume = await session.RegisterVolumeAsync("moved-to");

        // Dispose starts on its own thread from inside the call; the call then stays inside for 300 ms more.
        var disposing = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var started = new ManualResetEventSlim();
        var returnedInsideCall = false;
        var callbackEnded = 0L;
        var list = new CallbackList<long>([.. ids], () =>
        {
            new Thread(() =>
            {
                started.Set();
                try
                {
                    db.Dispose();
                    disposing.SetResult(Stopwatch.GetTimestamp());
                }
                catch (Exception e)
                {
                    disposing.SetException(e);
                }
            }).Start();
            started.Wait();
            Thread.Sleep(300);
            returnedInsideCall = disposing.Task.IsCompleted;
            callbackEnded = Stopwatch.GetTimestamp();
        });

        var (moved, error) = await OutcomeAsync(() => session.MoveBlocksAsync(list, volume));
        var disposeReturned = await disposing.Task.WaitAsync(TimeSpan.FromSeconds(10));
        var order = Stopwatch.GetElapsedTime(callbackEnded, disposeReturned).TotalMilliseconds;
        Output.WriteLine($"call: {Describe(moved, error)}; Dispose returned {order:F0} ms after the call's callback ended");

        Assert.False(returnedInsideCall, $"Dispose returned while the call was still inside the session ({-order:F0} ms before the call's callback ended); the call then {Describe(moved, error)}");
        Assert.True(error is null, $"the call was broken by the concurrent Dispose: {error?.GetType().Name}: {error?.Message}");
        await using var reopened = OpenWith(path, "PInvoke");
        await using var check = await reopened.OpenSessionAsync();
        Assert.Equal(3, moved);
        foreach (var id in ids)
        {
            Assert.Equal(volume, (await check.GetBlockAsync(id)).VolumeId);
        }
    }

    /// <summary>A database disposed while sessions on eight threads run calls: every call ends, committed batches are there.</summary>
    [Fact]
    public async Task A_database_disposed_under_running_session_calls_ends_every_call_and_keeps_every_acknowledged_write()
    {
        var path = Folder.File("dispose.db");
        var db = Open("dispose.db", o => { o.Batching.CommitEvery = 5; o.Batching.CommitAfterMilliseconds = 20; });
        var committed = new ConcurrentBag<(int Key, long Id)>();
        var pending = new ConcurrentBag<(int Key, long Id)>();
        var failures = new ConcurrentQueue<Exception>();
        var tasks = Enumerable.Range(0, 8).Select(t => Task.Run(async () =>
        {
            var rng = new Random(t);
            try
            {
                var session = await db.OpenSessionAsync();
                var batch = new List<(int, long)>();
                while (true)
                {
                    await Task.Yield(); // calls complete synchronously: let other tasks (and timers) run on the two cores
                    var k = rng.Next(500);
                    batch.Add((k, (await session.SelectXorInsertAsync(TestData.Block(k, 10))).Id));
                    if (rng.Next(4) == 0)
                    {
                        await session.CommitAsync();
                        batch.ForEach(committed.Add);
                        batch.Clear();
                    }

                    foreach (var p in batch)
                    {
                        pending.Add(p); // committed by the database's dispose (OnDispose = Commit) when it reports no error
                    }
                }
            }
            catch (ObjectDisposedException)
            {
            }
            catch (Exception e)
            {
                failures.Enqueue(e);
            }
        })).ToArray();

        await Task.Delay(300);
        var disposeError = await Record.ExceptionAsync(() => db.DisposeAsync().AsTask().WaitAsync(Hang));
        await Task.WhenAll(tasks).WaitAsync(Hang);
        Assert.Null(disposeError);
        Assert.Empty(failures);
        using var raw = new RawSql(path);
        var rows = raw.Blocks().ToDictionary(r => r.Id);
        Assert.Equal(0, raw.DuplicateGroups());
        Assert.All(committed.Concat(pending), c => Assert.True(rows.TryGetValue(c.Id, out var row) && row.Hash == TestData.Hash(c.Key), $"block {c.Key} at {c.Id} lost"));
    }

    [Fact]
    public async Task Database_dispose_waits_for_its_running_repair_and_check()
    {
        var path = Folder.File("repair-dispose.db");
        await using (var db = Open("repair-dispose.db"))
        {
        }

        using (var raw = new RawSql(path))
        {
            // 400,000 rows in 200,000 duplicate pairs (foreign SQL), so the repair has work for a while.
            raw.Execute("BEGIN");
            raw.Execute("""WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400000) INSERT INTO "Block" ("ID", "Hash", "Size") SELECT x, CAST(printf('%032d', x / 2) AS BLOB), 10 FROM c""");
            raw.Execute("""UPDATE "BlockDbState" SET "MaxBlockId" = 400000""");
            raw.Execute("COMMIT");
        }

        var database = Open("repair-dispose.db");
        var repair = database.RepairAsync().AsTask();
        var check = database.CheckAsync().AsTask();
        await database.DisposeAsync();
        var (repairDone, checkDone) = (repair.IsCompleted, check.IsCompleted);
        long rowsAtDispose;
        using (var raw = new RawSql(path))
        {
            rowsAtDispose = raw.Scalar("""SELECT COUNT(*) FROM "Block" """);
        }

        var repairOutcome = await Record.ExceptionAsync(() => repair.WaitAsync(Hang));
        var checkOutcome = await Record.ExceptionAsync(() => check.WaitAsync(Hang));
        long rowsAfter;
        using (var raw = new RawSql(path))
        {
            rowsAfter = raw.Scalar("""SELECT COUNT(*) FROM "Block" """);
        }

        Assert.True(
            (repairDone || repairOutcome is ObjectDisposedException) && (checkDone || checkOutcome is ObjectDisposedException),
            $"DisposeAsync returned with RepairAsync {(repairDone ? "done" : "still running")} and CheckAsync {(checkDone ? "done" : "still running")}; "
            + $"afterwards the repair {(repairOutcome is null ? "succeeded" : repairOutcome.GetType().Name)} and the check {(checkOutcome is null ? "succeeded" : checkOutcome.GetType().Name)}; "
            + $"the file had {rowsAtDispose} blocks when Dispose returned and {rowsAfter} later: the disposed database kept writing it.");
    }

    // Defect 5: disposing the shared session disposes the reader semaphore while callers wait on it; a
    // disposed SemaphoreSlim never wakes its waiters and the slot holder's Release then throws, so those calls never
    // complete. To have waiters at that moment on any machine, the one reader slot is held by a call whose new reader
    // connection waits for another connection's exclusive lock (rollback-journal file).
    [Fact]
    public async Task Every_call_completes_when_the_shared_session_is_disposed()
    {
        var path = Folder.File("shared.db");
        await using var db = OpenWith(path, "PInvoke", o =>
        {
            o.Pragmas.Preset = PragmaPreset.None; // DELETE journal: a reader waits while another connection holds the exclusive lock
            o.Pragmas.BusyTimeout = 10_000;
            o.GroupCommit.MaxReaders = 1;
        });
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 10));
        }

        for (var round = 0; round < 3; round++)
        {
            var shared = db.OpenSharedSession();
            using var holder = RawOpen(path);
            holder.Execute("PRAGMA busy_timeout = 10000");
            holder.Execute("BEGIN EXCLUSIVE");
            var returned = 0L;
            var disposedErrors = 0;
            var otherErrors = new ConcurrentQueue<Exception>();
            var started = 0;
            async Task FindUntilDisposedAsync()
            {
                Interlocked.Increment(ref started);
                while (true)
                {
                    try
                    {
                        await shared.FindBlockAsync(TestData.Block(1, 10));
                        Interlocked.Increment(ref returned);
                    }
                    catch (ObjectDisposedException)
                    {
                        Interlocked.Increment(ref disposedErrors);
                        return;
                    }
                    catch (Exception e)
                    {
                        otherErrors.Enqueue(e);
                        return;
                    }
                }
            }

            // Own threads to start on: the slot holder blocks one, and the pool may be slow to grow.
            var tasks = Enumerable.Range(0, 32)
                .Select(_ => Task.Factory.StartNew(FindUntilDisposedAsync, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).Unwrap())
                .ToArray();

            // One call holds the reader slot (its new connection waits for the lock); the other 31 wait for the slot.
            for (var wait = Stopwatch.StartNew(); Volatile.Read(ref started) < 32 && wait.Elapsed < TimeSpan.FromSeconds(5);)
            {
                await Task.Delay(10);
            }

            await Task.Delay(100);
            var disposing = shared.DisposeAsync().AsTask();
            await Task.WhenAny(disposing, Task.Delay(2000)); // a DisposeAsync that waits for the running call gets the lock back after 2 s
            holder.Execute("ROLLBACK");
            await disposing.WaitAsync(TimeSpan.FromSeconds(10));
            await Task.WhenAny(Task.WhenAll(tasks), Task.Delay(TimeSpan.FromSeconds(10)));
            var hung = tasks.Count(t => !t.IsCompleted);
            Output.WriteLine($"round {round}: {Interlocked.Read(ref returned)} calls returned, {Volatile.Read(ref disposedErrors)} threw ObjectDisposedException, {otherErrors.Count} threw something else, {hung} never completed");
            Assert.True(hung == 0, $"round {round}: {hung} of 32 calls did not complete within 10 s of DisposeAsync");
            Assert.True(otherErrors.IsEmpty, $"round {round}: {string.Join("; ", otherErrors.Select(e => $"{e.GetType().Name}: {e.Message}"))}");
        }
    }

    /// <summary>
    /// Sixteen tasks on the shared session, disposed under them once they have had blocksets acknowledged: no call
    /// hangs, every acknowledged write is there. The dispose waits for that progress rather than a fixed time: a cold
    /// process at load average ~21 acknowledged no blockset in its first second.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_shared_session_disposed_under_sixteen_tasks_ends_every_call_and_keeps_every_acknowledged_write(bool disposeTheDatabase)
    {
        var path = Folder.File("shared.db");
        var db = Open("shared.db", o => o.GroupCommit.MaxDelayMilliseconds = 2);
        var shared = db.OpenSharedSession();
        var blocks = new ConcurrentBag<(BlockKey Key, long Id)>();
        var sets = new ConcurrentBag<(long Id, BlockKey[] Blocks)>();
        var failures = new ConcurrentQueue<Exception>();
        var tasks = Enumerable.Range(0, 16).Select(t => Task.Run(async () =>
        {
            var rng = new Random(t);
            try
            {
                while (true)
                {
                    await Task.Yield(); // calls complete synchronously: let other tasks (and timers) run on the two cores
                    var set = Enumerable.Range(0, rng.Next(1, 5)).Select(_ => TestData.Block(rng.Next(400), 10 + rng.Next(2))).ToArray();
                    foreach (var key in set)
                    {
                        blocks.Add((key, (await shared.SelectXorInsertAsync(key)).Id));
                    }

                    sets.Add((await shared.AddBlocksetAsync(set), set));
                    if (await shared.FindBlockAsync(set[0]) is null)
                    {
                        failures.Enqueue(new InvalidOperationException($"committed block {set[0]} not found"));
                    }
                }
            }
            catch (ObjectDisposedException)
            {
            }
            catch (Exception e)
            {
                failures.Enqueue(e);
            }
        })).ToArray();

        await AcknowledgedAsync(sets, ProgressBeforeDispose);
        if (disposeTheDatabase)
        {
            await db.DisposeAsync().AsTask().WaitAsync(Hang);
        }
        else
        {
            await shared.DisposeAsync().AsTask().WaitAsync(Hang);
            await db.DisposeAsync();
        }

        await Task.WhenAll(tasks).WaitAsync(Hang);
        Assert.Empty(failures);
        await using var check = Open("shared.db");
        await using var session = await check.OpenSessionAsync();
        foreach (var (key, id) in blocks)
        {
            Assert.Equal(id, await session.FindBlockAsync(key));
        }

        foreach (var (id, set) in sets)
        {
            Assert.Equal(set, (await session.ListBlocksetBlocksAsync(id)).Select(b => b.Block));
        }

        using var raw = new RawSql(path);
        Assert.Equal(0, raw.DuplicateGroups());
    }

    /// <summary>Blocksets the sixteen tasks have acknowledged before the shared session is disposed under them.</summary>
    private const int ProgressBeforeDispose = 20;

    /// <summary>Returns once <paramref name="acknowledged"/> holds <paramref name="count"/> items; fails as hung when it does not within <see cref="KeyMapFileTestBase.Hang"/>.</summary>
    private static async Task AcknowledgedAsync<T>(ConcurrentBag<T> acknowledged, int count)
    {
        var waited = Stopwatch.StartNew();
        while (acknowledged.Count < count)
        {
            Assert.True(waited.Elapsed < Hang, $"the shared session acknowledged {acknowledged.Count} of {count} blocksets in {Hang.TotalSeconds:F0} s: hung");
            await Task.Delay(10);
        }
    }

    [Fact]
    public async Task A_second_concurrent_dispose_returns_only_once_every_queued_write_is_committed()
    {
        var options = (BlockDbOptions o) =>
        {
            o.Pragmas.Preset = PragmaPreset.SqliteDefaults; // DELETE journal, synchronous FULL: commits take a while
            o.Pragmas.BusyTimeout = 5000;
            o.GroupCommit.MaxBatchSize = 8;
        };

        // (1) Deterministic: two DisposeAsync calls on one shared session. "No call is left pending after DisposeAsync returns."
        int pendingAfterSecond;
        await using (var db = Open("double-dispose.db", options))
        {
            var shared = db.OpenSharedSession();
            var writes = Enumerable.Range(0, 400).Select(i => shared.SelectXorInsertManyAsync(new[] { TestData.Block(i, 10) }, new SelectXorInsertResult[1]).AsTask()).ToArray(); // straight to the queue
            var first = shared.DisposeAsync().AsTask();
            await shared.DisposeAsync().AsTask().WaitAsync(Hang); // returns at once: _disposed was already set
            pendingAfterSecond = writes.Count(w => !w.IsCompleted);
            await first.WaitAsync(Hang);
            await Task.WhenAll(writes).WaitAsync(Hang); // the first dispose does commit them all
        }

        // (2) The same race through the database: its Dispose is that second caller, then disposes the shared session's
        // writer session (OnDispose = Rollback) under the writer loop. Writes queued before any dispose then fail.
        var failedWrites = 0;
        var pendingAfterDatabase = 0;
        for (var trial = 0; trial < 5; trial++)
        {
            var db = Open($"race-{trial}.db", options);
            var shared = db.OpenSharedSession();
            var writes = Enumerable.Range(0, 400).Select(i => shared.SelectXorInsertManyAsync(new[] { TestData.Block(i, 10) }, new SelectXorInsertResult[1]).AsTask()).ToArray(); // straight to the queue
            var disposeShared = shared.DisposeAsync().AsTask();
            await db.DisposeAsync().AsTask().WaitAsync(Hang);
            pendingAfterDatabase += writes.Count(w => !w.IsCompleted);
            await disposeShared.WaitAsync(Hang);
            var outcomes = await Task.WhenAll(writes.Select(w => Record.ExceptionAsync(() => w))).WaitAsync(Hang);
            failedWrites += outcomes.Count(e => e is ObjectDisposedException);
        }

        Assert.True(
            pendingAfterSecond == 0 && pendingAfterDatabase == 0 && failedWrites == 0,
            $"A second DisposeAsync of the shared session returned with {pendingAfterSecond} of 400 queued writes pending. Disposing the database while the shared session was disposing "
            + $"returned with {pendingAfterDatabase} of 5 x 400 writes pending, and {failedWrites} writes queued before any dispose failed with ObjectDisposedException instead of committing.");
    }
}
