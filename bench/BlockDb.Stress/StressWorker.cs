using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;

namespace BlockDb.Stress;

/// <summary>
/// One worker process: two <see cref="BlockDatabase"/> objects on the file (two key maps), each with two sessions
/// (different batching and busy timeouts, rollbacks, explicit and age commits) and a shared session; plus a churn
/// loop that opens a third database, runs calls on it and disposes it under them. Prints an <c>ACKB</c> or
/// <c>ACKS</c> line only once a write is known committed: after <c>CommitAsync</c> returned, or when a shared
/// repository call completed.
/// </summary>
internal sealed class StressWorker(string path, string provider, JournalMode journal, TimeSpan duration, int seed)
{
    private const int HangSeconds = 30;
    private readonly long _deadline = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
    private readonly Dictionary<string, long> _stats = [];
    private readonly ConcurrentDictionary<string, string> _doing = new();

    public async Task<int> RunAsync()
    {
        StartWatchdog();
        Doing("main", "opening database a");
        var a = await OpenAsync(o => { o.Batching.CommitEvery = 1 + new Random(seed).Next(40); o.Pragmas.BusyTimeout = 50; });
        Doing("main", "opening database b");
        var b = await OpenAsync(o => { o.Batching.CommitEvery = 0; o.Batching.CommitAfterMilliseconds = 20 + new Random(seed + 1).Next(60); o.Pragmas.BusyTimeout = 200; });
        Doing("main", "running");
        await Task.WhenAll(
            Tracked($"session {seed + 10}", () => SessionLoopAsync(a, seed + 10)),
            Tracked($"session {seed + 11}", () => SessionLoopAsync(a, seed + 11)),
            Tracked($"session {seed + 12}", () => SessionLoopAsync(b, seed + 12)),
            Tracked($"session {seed + 13}", () => SessionLoopAsync(b, seed + 13)),
            Tracked($"shared {seed + 20}", () => SharedLoopAsync(a, seed + 20)),
            Tracked($"shared {seed + 21}", () => SharedLoopAsync(b, seed + 21)),
            Tracked("churn", () => ChurnLoopAsync(seed + 30)));
        Doing("main", "disposing database b");
        await b.DisposeAsync();
        Doing("main", "disposing database a");
        await a.DisposeAsync();
        Doing("main", "done");
        lock (_stats)
        {
            Output.Line("STAT " + string.Join(' ', _stats.Select(s => $"{s.Key}={s.Value}")));
        }

        return 0;
    }

    private bool Running => Stopwatch.GetTimestamp() < _deadline;

    /// <summary>
    /// A thread of its own (not the thread pool, which a hang may have starved) that, 60 s after the run time, prints
    /// what every loop still running was doing as a <c>HANG</c> line: the orchestrator reports it as a failure.
    /// </summary>
    private void StartWatchdog()
    {
        var watchdog = new Thread(() =>
        {
            Thread.Sleep(TimeSpan.FromSeconds(60) + TimeSpan.FromSeconds(Math.Max(0, (double)(_deadline - Stopwatch.GetTimestamp()) / Stopwatch.Frequency)));
            var stuck = _doing.Where(d => d.Value != "done").Select(d => $"{d.Key}: {d.Value}").ToList();
            Output.Line($"HANG worker still running 60 s after its run time; loops not done: {(stuck.Count == 0 ? "none (ending)" : string.Join("; ", stuck))}; thread pool threads {ThreadPool.ThreadCount}, pending work items {ThreadPool.PendingWorkItemCount}");
        })
        { IsBackground = true, Name = "stress watchdog" };
        watchdog.Start();
    }

    /// <summary>Runs a loop on the thread pool and marks it done for the watchdog when it ended (disposals included).</summary>
    private Task Tracked(string loop, Func<Task> body) => Task.Run(async () =>
    {
        try
        {
            await body();
        }
        finally
        {
            Doing(loop, "done");
        }
    });

    /// <summary>Records what a loop is doing now, for the watchdog.</summary>
    private void Doing(string loop, string what) => _doing[loop] = what;

    /// <summary>Opens the file; in DELETE journal mode even opening waits for a committing writer, so BUSY is retried.</summary>
    private Task<IBlockDatabase> OpenAsync(Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = path, Pragmas = { JournalMode = journal } };
        configure?.Invoke(options);
        return RetryBusyAsync(() => Task.FromResult(BlockDatabase.Open(options)));
    }

    /// <summary>Opening a database, session or shared session reads the file: in DELETE journal mode that waits for a committing writer, so BUSY is retried.</summary>
    private async Task<T> RetryBusyAsync<T>(Func<Task<T>> open)
    {
        while (true)
        {
            try
            {
                return await open();
            }
            catch (BlockDbException e) when (e.IsTransient)
            {
                Count("busy-open");
                await Task.Delay(10);
            }
        }
    }

    private async Task SessionLoopAsync(IBlockDatabase db, int taskSeed)
    {
        var random = new Random(taskSeed);
        var loop = $"session {taskSeed}";
        Doing(loop, "opening");
        await using var session = await RetryBusyAsync(() => db.OpenSessionAsync().AsTask());
        var blocks = new List<string>();
        var sets = new List<string>();
        while (Running)
        {
            try
            {
                var roll = random.Next(100);
                if (roll < 70)
                {
                    var file = StressKeys.File(random);
                    Doing(loop, "select-xor-insert");
                    foreach (var key in file)
                    {
                        var result = await session.SelectXorInsertAsync(key);
                        blocks.Add(AckBlock(key, result.Id, result.Created, loop));
                        Count(result.Created ? "created" : "found");
                    }

                    Doing(loop, "add blockset");
                    var id = await session.AddBlocksetAsync(file, new SelectXorInsertResult[file.Length]);
                    sets.Add(AckBlockset(id, file, loop));
                    Count("blocksets");
                }
                else if (roll < 78)
                {
                    Doing(loop, "rollback");
                    await session.RollbackAsync();
                    if (blocks.Count + sets.Count > 0)
                    {
                        Count("rollbacks");
                    }

                    blocks.Clear();
                    sets.Clear();
                }
                else if (roll < 92)
                {
                    Doing(loop, "commit");
                    await CommitAsync(session, blocks, sets);
                }
                else
                {
                    var key = StressKeys.Get(random.Next(StressKeys.Count));
                    Doing(loop, "find");
                    await session.FindBlockAsync(key);
                    Count("finds");
                }

                if (session.PendingWrites == 0 && blocks.Count + sets.Count > 0)
                {
                    // Committed by the batch size or the age timer: CommitAsync reports a failed age commit, if any.
                    await CommitAsync(session, blocks, sets);
                }
            }
            catch (BlockDbBatchRolledBackException e)
            {
                Count(e.CommitOutcomeUnknown ? "commit-outcome-unknown" : "lost-batches");
                Output.Line($"NOTE @{DateTime.UtcNow.Ticks} {loop} lost a batch of {blocks.Count + sets.Count} results: {e.Message.Replace('\n', ' ')}");
                blocks.Clear();
                sets.Clear();
            }
            catch (Exception e)
            {
                Expected(e);
            }
        }

        try
        {
            Doing(loop, "last commit");
            await CommitAsync(session, blocks, sets);
        }
        catch (Exception e)
        {
            Expected(e);
        }

        Doing(loop, "disposing");
    }

    private async Task CommitAsync(IBlockSession session, List<string> blocks, List<string> sets)
    {
        await session.CommitAsync();
        Count("commits");
        if (blocks.Count + sets.Count > 0)
        {
            Output.Line(string.Create(CultureInfo.InvariantCulture, $"COMMITTED {blocks.Count + sets.Count} @{DateTime.UtcNow.Ticks}"));
        }

        foreach (var line in blocks.Concat(sets))
        {
            Output.Line(line);
        }

        blocks.Clear();
        sets.Clear();
    }

    private async Task SharedLoopAsync(IBlockDatabase db, int taskSeed)
    {
        Doing($"shared {taskSeed}", "opening");
        await using var shared = await RetryBusyAsync(() => Task.FromResult(db.OpenSharedSession()));
        await Task.WhenAll(Enumerable.Range(0, 3).Select(t => Task.Run(async () =>
        {
            var random = new Random(taskSeed * 7 + t);
            var loop = $"shared {taskSeed}.{t}";
            while (Running)
            {
                Doing(loop, "file");
                await SharedFileAsync(shared, random);
            }

            Doing(loop, "done");
        })));
        Doing($"shared {taskSeed}", "disposing");
    }

    /// <summary>One file through a shared session: every completed call is committed, so it is acknowledged at once.</summary>
    private async Task SharedFileAsync(ISharedBlockSession shared, Random random)
    {
        try
        {
            var file = StressKeys.File(random);
            foreach (var key in file)
            {
                var result = await shared.SelectXorInsertAsync(key);
                Output.Line(AckBlock(key, result.Id, result.Created, "shared"));
                Count(result.Created ? "shared-created" : "shared-found");
            }

            Output.Line(AckBlockset(await shared.AddBlocksetAsync(file, new SelectXorInsertResult[file.Length]), file, "shared"));
            Count("shared-blocksets");
        }
        catch (ObjectDisposedException)
        {
            throw;
        }
        catch (Exception e)
        {
            Expected(e);
        }
    }

    /// <summary>Opens a database, runs calls on it from several tasks, and disposes it under them: every call must end.</summary>
    private async Task ChurnLoopAsync(int taskSeed)
    {
        var random = new Random(taskSeed);
        while (Running)
        {
            Doing("churn", "opening");
            var db = await OpenAsync(o => { o.Batching.CommitEvery = 1 + random.Next(10); o.Pragmas.BusyTimeout = 100; });
            var session = await RetryBusyAsync(() => db.OpenSessionAsync().AsTask());
            var shared = await RetryBusyAsync(() => Task.FromResult(db.OpenSharedSession()));
            var calls = new List<Task>
            {
                Task.Run(async () =>
                {
                    var r = new Random(random.Next());
                    while (true)
                    {
                        var key = StressKeys.Get(r.Next(StressKeys.Count));
                        await session.SelectXorInsertAsync(key);
                    }
                }),
            };
            calls.AddRange(Enumerable.Range(0, 2).Select(_ => Task.Run(async () =>
            {
                var r = new Random(random.Next());
                while (true)
                {
                    await SharedFileAsync(shared, r);
                }
            })));
            Doing("churn", "calls");
            await Task.Delay(50 + random.Next(250));
            Doing("churn", "disposing under calls");
            var dispose = db.DisposeAsync().AsTask();
            var everything = Task.WhenAll([.. calls, dispose]);
            try
            {
                await everything.WaitAsync(TimeSpan.FromSeconds(HangSeconds));
            }
            catch (TimeoutException)
            {
                Output.Line($"HANG disposing a database left {calls.Count(c => !c.IsCompleted)} call loops and dispose={dispose.IsCompleted} pending after {HangSeconds} s");
                return;
            }
            catch (Exception)
            {
                // Inspected below, call by call.
            }

            foreach (var call in calls.Append(dispose))
            {
                if (call.Exception?.InnerException is { } e and not ObjectDisposedException)
                {
                    Expected(e);
                }
            }

            Count("churned-databases");
        }

    }

    /// <summary>
    /// Counts the failures a stressed index may give: a block the foreign writer deleted, a lost batch, and errors
    /// SQLite raised (they carry its result code: BUSY, and in DELETE journal mode under SIGKILL an I/O error while
    /// another process rolls back a hot journal). Anything else (another exception type, or a BlockDb error without
    /// a SQLite code) is reported as an error.
    /// </summary>
    private void Expected(Exception e)
    {
        switch (e)
        {
            case BlockNotFoundException:
                Count("block-not-found");
                break;
            case BlockDbBatchRolledBackException:
                Count("lost-batches");
                break;
            case BlockDbException { IsTransient: true }:
                Count("busy");
                break;
            case BlockDbException { SqliteErrorCode: SqliteResultCode.IOError } io:
                Count($"ioerr-{io.SqliteExtendedErrorCode}");
                Output.Line($"NOTE @{DateTime.UtcNow.Ticks} {io.GetType().Name} {io.SqliteExtendedErrorCode}: {io.Message.Replace('\n', ' ')} | {io.StackTrace?.Replace('\n', ' ')}");
                break;
            default:
                Output.Line($"ERROR {e.GetType().Name}: {e.Message.Replace('\n', ' ')}");
                break;
        }
    }

    private void Count(string what)
    {
        lock (_stats)
        {
            _stats[what] = _stats.GetValueOrDefault(what) + 1;
        }
    }

    // Each line ends with where and when (UTC ticks) the result came, for the orchestrator's diagnosis of a failure.
    private static string AckBlock(BlockKey key, long id, bool created, string loop) =>
        string.Create(CultureInfo.InvariantCulture, $"ACKB {StressKeys.Format(key)} {id} {(created ? 1 : 0)} {Where(loop)}");

    private static string AckBlockset(long id, BlockKey[] file, string loop) =>
        string.Create(CultureInfo.InvariantCulture, $"ACKS {id} {string.Join(',', file.Select(StressKeys.Format))} {Where(loop)}");

    private static string Where(string loop) => string.Create(CultureInfo.InvariantCulture, $"{loop.Replace(' ', '_')}@{DateTime.UtcNow.Ticks}");
}
