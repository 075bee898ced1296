using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using BlockDb.Drivers;
using Xunit.Abstractions;

namespace BlockDb.Tests;

/// <summary>
/// Regression tests for the defects of issue #10. Each asserts what a correct library must do, on real files in
/// a temp folder, through the public API plus raw SQL; figures measured on the way go to the test output.
/// </summary>
public sealed class Issue10RegressionTests : IDisposable
{
    private const string DuplicatesSql = """SELECT COUNT(*) FROM (SELECT 1 FROM "Block" GROUP BY "Hash", "Size" HAVING COUNT(*) > 1)""";
    private readonly TempFolder _folder = new();
    private readonly ITestOutputHelper _output;

    public Issue10RegressionTests(ITestOutputHelper output) => _output = output;

    public static TheoryData<string> Providers() => [.. BlockDbProviders.Names];

    public void Dispose() => _folder.Dispose();

    // Defect 1: RollbackBatch releases the write lock before BlockKeyMap.Rewind, so a session that begins in that
    // window records the rolled-back top ID as its rewind point; when it rolls back in turn, the map's watermark stays
    // above the committed rows, and rows later committed at those IDs (by another database) are never read.
    [Fact]
    public async Task Defect1_rollback_race_never_duplicates_a_block()
    {
        var path = _folder.File("race.db");
        await using var db = Open(path, "PInvoke", o =>
        {
            o.Index.Layout = BlockLayout.KeyMap;
            o.Pragmas.BusyTimeout = 0;
            o.Batching.CommitEvery = 0;
        });
        await using var other = Open(path, "PInvoke", o => o.Pragmas.BusyTimeout = 5000);
        await using var s1 = await db.OpenSessionAsync();
        await using var s2 = await db.OpenSessionAsync();
        await using var writer = await other.OpenSessionAsync();
        Assert.Null(await s1.FindBlockAsync(TestData.Hash(-1), 1)); // both maps loaded (empty)
        Assert.Null(await writer.FindBlockAsync(TestData.Hash(-1), 1));

        var next = 0;
        int NextSeed() => Interlocked.Increment(ref next);
        var clock = Stopwatch.StartNew();
        var rounds = 0;
        var bursts = 0;
        var missed = false;
        List<(string Hash, long Id, long? Found)> check = [];
        while (!missed && clock.Elapsed < TimeSpan.FromSeconds(4))
        {
            bursts++;
            using var stop = new CancellationTokenSource();

            // s1: a few new blocks, then roll them back.
            var rollbacks = Task.Run(async () =>
            {
                try
                {
                    for (var i = 0; i < 200; i++)
                    {
                        for (var b = 0; b < 3; b++)
                        {
                            await RetryBusyAsync(() => s1.SelectXorInsertAsync(TestData.Hash(NextSeed()), 10));
                        }

                        await s1.RollbackAsync();
                        Interlocked.Increment(ref rounds);
                    }
                }
                finally
                {
                    await stop.CancelAsync();
                }
            });

            // s2: keeps retrying a new block through SQLITE_BUSY (busy_timeout 0), and rolls its batch back too.
            // (When s2 commits instead, the commit fills the IDs the stale watermark skips and the race leaves no trace.)
            var retries = Task.Run(async () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    await RetryBusyAsync(() => s2.SelectXorInsertAsync(TestData.Hash(NextSeed()), 10));
                    await s2.RollbackAsync();
                }
            });
            await Task.WhenAll(rollbacks, retries);

            // A second database (another process, in effect) commits new blocks; the first must find each of them.
            check = [];
            for (var i = 0; i < 3; i++)
            {
                var hash = TestData.Hash(NextSeed());
                check.Add((hash, (await writer.SelectXorInsertAsync(hash, 10)).Id, null));
            }

            await writer.CommitAsync();
            for (var i = 0; i < check.Count; i++)
            {
                check[i] = (check[i].Hash, check[i].Id, await s1.FindBlockAsync(check[i].Hash, 10));
            }

            missed = check.Any(c => c.Found != c.Id);
        }

        var again = new List<SelectXorInsertResult>();
        foreach (var c in check)
        {
            again.Add(await s1.SelectXorInsertAsync(c.Hash, 10));
        }

        await s1.CommitAsync();
        var duplicates = RawQuery(path, DuplicatesSql);
        var report = string.Join(", ", check.Select((c, i) => $"committed at {c.Id}, found {c.Found?.ToString(CultureInfo.InvariantCulture) ?? "null"}, select-xor-insert {again[i].Id}{(again[i].Created ? " created" : string.Empty)}"));
        _output.WriteLine($"{(missed ? "missed" : "no miss")} after {rounds} rollback rounds in {bursts} bursts ({clock.Elapsed.TotalSeconds:F1} s); last check: {report}; duplicated blocks: {duplicates}");
        Assert.False(missed, $"after {rounds} rollback rounds the first database missed a block the second one committed: {report}; duplicated blocks: {duplicates}");
        Assert.All(check.Zip(again), x => Assert.Equal(new SelectXorInsertResult(x.First.Id, false), x.Second));
        Assert.Equal("0", duplicates);
    }

    // Defect 2: the key map reads only rows above its watermark, so a row at a reused rowid, in a gap below the
    // watermark, or at ID 0 or below is never read; the block is then "not found" and inserted a second time.
    [Theory]
    [InlineData("reused-rowid")]
    [InlineData("gap")]
    [InlineData("zero")]
    [InlineData("negative")]
    public async Task Defect2_a_row_the_map_never_read_is_found_or_refused_never_duplicated(string where)
    {
        var path = _folder.File("rows.db");
        await using var db = Open(path, "PInvoke", o => o.Index.Layout = BlockLayout.KeyMap);
        await using var session = await db.OpenSessionAsync();
        for (var i = 1; i <= 10; i++)
        {
            Assert.Equal(i, (await session.SelectXorInsertAsync(TestData.Hash(i), 100)).Id);
        }

        await session.CommitAsync();
        Assert.Equal(10, await session.FindBlockAsync(TestData.Hash(10), 100)); // the map is loaded up to ID 10

        var hash = TestData.Hash(1000);
        long rowId;
        using (var raw = RawOpen(path))
        {
            try
            {
                switch (where)
                {
                    case "reused-rowid":
                        raw.Execute("""DELETE FROM "Block" WHERE "ID" = (SELECT MAX("ID") FROM "Block")""");
                        RawInsert(raw, null, hash, 100);
                        break;
                    case "gap":
                        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
                        RawInsert(raw, 5, hash, 100);
                        break;
                    case "zero":
                        RawInsert(raw, 0, hash, 100);
                        break;
                    default:
                        RawInsert(raw, -7, hash, 100);
                        break;
                }
            }
            catch (BlockDbException e)
            {
                _output.WriteLine($"The file refused the foreign write ({where}): {e.Message}");
                return;
            }

            rowId = long.Parse(raw.QueryText("SELECT last_insert_rowid()")!, CultureInfo.InvariantCulture);
        }

        // A commit call ends the session's read snapshot (read batching), so the lookup sees the foreign commit.
        await session.CommitAsync();
        var found = await session.FindBlockAsync(hash, 100);
        var result = await session.SelectXorInsertAsync(hash, 100);
        await session.CommitAsync();
        var duplicates = RawQuery(path, DuplicatesSql);
        _output.WriteLine($"{where}: foreign row at ID {rowId}; FindBlockAsync returned {found?.ToString(CultureInfo.InvariantCulture) ?? "null"}; SelectXorInsertAsync returned {result}; duplicated blocks: {duplicates}");
        Assert.True(found == rowId, $"{where}: the foreign row is at ID {rowId}, FindBlockAsync returned {found?.ToString(CultureInfo.InvariantCulture) ?? "null"} (then SelectXorInsertAsync gave {result}, {duplicates} duplicated block)");
        Assert.Equal(new SelectXorInsertResult(rowId, false), result);
        Assert.Equal("0", duplicates);
    }

    // Defect 3a: a block inserted at ID 2^32 is refused by the map only after the INSERT ran, and the failure path
    // (ReleaseIdleBatch) then commits the refused row; the next load of the map then fails on it.
    [Fact]
    public async Task Defect3a_a_refused_insert_above_uint_max_is_not_committed()
    {
        var path = _folder.File("uintmax.db");
        await CreateBlocksAsync(path, 3);
        if (!TryRawInsert(path, uint.MaxValue, TestData.Hash(50), 10))
        {
            return;
        }

        var before = long.Parse(RawQuery(path, """SELECT COUNT(*) FROM "Block" """)!, CultureInfo.InvariantCulture);
        Exception? refused;
        await using (var db = Open(path, "PInvoke"))
        await using (var session = await db.OpenSessionAsync())
        {
            refused = await Record.ExceptionAsync(async () => await session.SelectXorInsertAsync(TestData.Hash(51), 10));
            _output.WriteLine($"Select-xor-insert of a new block above ID {uint.MaxValue}: {refused?.GetType().Name ?? "succeeded"} {refused?.Message}");
        }

        var after = long.Parse(RawQuery(path, """SELECT COUNT(*) FROM "Block" """)!, CultureInfo.InvariantCulture);
        var top = RawQuery(path, """SELECT MAX("ID") FROM "Block" """);
        if (refused is not null)
        {
            Assert.True(after == before, $"the insert failed ({refused.GetType().Name}) but its row was committed: {before} rows before, {after} after reopening, max ID {top}");
        }

        await using (var db = Open(path, "PInvoke"))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(1, await session.FindBlockAsync(TestData.Hash(1), 10));
        }
    }

    // Defect 3b: the map load stops with an exception at an ID above 2^32 after loading the rows below it, so the
    // first lookup throws and a repeat of the same lookup succeeds from the half-loaded map.
    [Fact]
    public async Task Defect3b_a_lookup_behaves_the_same_when_repeated_with_an_id_above_uint_max()
    {
        var path = _folder.File("fivebillion.db");
        await CreateBlocksAsync(path, 3);
        if (!TryRawInsert(path, 5_000_000_000, TestData.Hash(60), 10))
        {
            return;
        }

        await using var db = Open(path, "PInvoke");
        await using var session = await db.OpenSessionAsync();
        var (first, firstError) = await OutcomeAsync(() => session.FindBlockAsync(TestData.Hash(1), 10));
        var (second, secondError) = await OutcomeAsync(() => session.FindBlockAsync(TestData.Hash(1), 10));
        _output.WriteLine($"first: {Describe(first, firstError)}; repeat: {Describe(second, secondError)}");
        Assert.True(
            firstError?.GetType() == secondError?.GetType() && first == second,
            $"the first lookup gave {Describe(first, firstError)} and the same lookup repeated gave {Describe(second, secondError)}");
    }

    // Defect 4: the map key is the first 8 bytes of the hash, so hashes sharing them share one probe chain and each
    // lookup verifies every candidate on it with one SQL read.
    [Fact]
    public async Task Defect4_hashes_sharing_their_first_8_bytes_do_not_share_a_probe_chain()
    {
        const int blocks = 4000;
        var random = new Random(10);
        var prefix = new byte[8];
        random.NextBytes(prefix);
        var shared = await PagesPerLookupAsync(_folder.File("prefix.db"), blocks, () =>
        {
            var hash = new byte[32];
            random.NextBytes(hash);
            prefix.CopyTo(hash, 0);
            return hash;
        });
        var ordinary = await PagesPerLookupAsync(_folder.File("random.db"), blocks, () =>
        {
            var hash = new byte[32];
            random.NextBytes(hash);
            return hash;
        });

        _output.WriteLine($"pages read per lookup: {shared:F1} with a shared 8-byte prefix, {ordinary:F1} with random hashes ({shared / ordinary:F0}x)");
        Assert.True(shared <= 10 * ordinary, $"{shared:F1} pages per lookup with a shared 8-byte prefix against {ordinary:F1} with random hashes ({shared / ordinary:F0}x, at most 10x allowed)");
    }

    // Defect 5: disposing the shared repository disposes the reader semaphore while callers wait on it; a
    // disposed SemaphoreSlim never wakes its waiters and the slot holder's Release then throws, so those calls never
    // complete. To have waiters at that moment on any machine, the one reader slot is held by a call whose new reader
    // connection waits for another connection's exclusive lock (rollback-journal file).
    [Fact]
    public async Task Defect5_every_call_completes_when_the_shared_repository_is_disposed()
    {
        var path = _folder.File("shared.db");
        await using var db = Open(path, "PInvoke", o =>
        {
            o.Pragmas.Preset = PragmaPreset.None; // DELETE journal: a reader waits while another connection holds the exclusive lock
            o.Pragmas.BusyTimeout = 10_000;
            o.GroupCommit.MaxReaders = 1;
        });
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Hash(1), 10);
        }

        for (var round = 0; round < 3; round++)
        {
            var shared = db.OpenSharedRepository();
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
                        await shared.FindBlockAsync(TestData.Hash(1), 10);
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
            _output.WriteLine($"round {round}: {Interlocked.Read(ref returned)} calls returned, {Volatile.Read(ref disposedErrors)} threw ObjectDisposedException, {otherErrors.Count} threw something else, {hung} never completed");
            Assert.True(hung == 0, $"round {round}: {hung} of 32 calls did not complete within 10 s of DisposeAsync");
            Assert.True(otherErrors.IsEmpty, $"round {round}: {string.Join("; ", otherErrors.Select(e => $"{e.GetType().Name}: {e.Message}"))}");
        }
    }

    // Defect 6: BlockDatabase.Dispose disposes each open session at once, even while a call runs inside it: the
    // call then runs on a closed connection instead of Dispose waiting for it.
    [Fact]
    public async Task Defect6_database_dispose_waits_for_a_call_running_in_a_session()
    {
        var path = _folder.File("inflight.db");
        var db = Open(path, "PInvoke", o =>
        {
            o.Batching.CommitEvery = 0;
            o.Batching.OnDispose = DisposeBehavior.Commit;
        });
        var session = await db.OpenSessionAsync();
        var ids = new List<long>();
        for (var i = 1; i <= 3; i++)
        {
            ids.Add((await session.SelectXorInsertAsync(TestData.Hash(i), 10)).Id);
        }

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

        var (blockset, error) = await OutcomeAsync(() => session.AddBlocksetAsync(list));
        var disposeReturned = await disposing.Task.WaitAsync(TimeSpan.FromSeconds(10));
        var order = Stopwatch.GetElapsedTime(callbackEnded, disposeReturned).TotalMilliseconds;
        _output.WriteLine($"call: {Describe(blockset, error)}; Dispose returned {order:F0} ms after the call's callback ended");

        Assert.False(returnedInsideCall, $"Dispose returned while the call was still inside the session ({-order:F0} ms before the call's callback ended); the call then {Describe(blockset, error)}");
        Assert.True(error is null, $"the call was broken by the concurrent Dispose: {error?.GetType().Name}: {error?.Message}");
        await using var reopened = Open(path, "PInvoke");
        await using var check = await reopened.OpenSessionAsync();
        Assert.Equal(3, (await check.GetBlocksetAsync(blockset)).BlockCount);
    }

    // Defect 7: opening an existing file runs the schema check inside BEGIN IMMEDIATE, so Open fails with
    // SQLITE_BUSY whenever another connection holds the write lock, though it only needs to read.
    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Defect7_opening_a_file_does_not_need_the_write_lock(string provider)
    {
        var path = _folder.File("locked.db");
        await CreateBlocksAsync(path, 3);
        using var holder = RawOpen(path);
        holder.Execute("BEGIN IMMEDIATE");
        RawInsert(holder, null, TestData.Hash(99), 10);
        try
        {
            var (db, error) = Outcome(() => Open(path, provider, o => o.Pragmas.BusyTimeout = 200));
            Assert.True(error is null, $"Open beside a writer failed: {error?.GetType().Name}: {error?.Message}");
            await using (db)
            await using (var session = await db!.OpenSessionAsync())
            {
                Assert.Equal(1, await session.FindBlockAsync(TestData.Hash(1), 10));
            }
        }
        finally
        {
            holder.Execute("ROLLBACK");
        }
    }

    // Defect 8: the first opens of a new file race on PRAGMA journal_mode = WAL: the connection that switches the
    // file cannot upgrade its read transaction while another opener is inside its BEGIN IMMEDIATE schema check, and
    // SQLite then returns SQLITE_BUSY at once instead of waiting for busy_timeout.
    [Fact]
    public async Task Defect8_concurrent_first_opens_of_a_new_file_all_succeed()
    {
        // Each round opens new files, each from 8 threads at once: one file per provider, plus three more with PInvoke,
        // the provider that surfaces the error (Microsoft.Data.Sqlite and System.Data.SQLite retry SQLITE_BUSY themselves
        // until their command timeout). At least 15 rounds, then more until a failure is seen or 10 s have passed.
        const int threads = 8;
        string[] providers = [.. BlockDbProviders.Names, "PInvoke", "PInvoke", "PInvoke"];
        var failures = new List<string>();
        var clock = Stopwatch.StartNew();
        var round = 0;
        for (; round < 15 || (failures.Count == 0 && clock.Elapsed < TimeSpan.FromSeconds(5)); round++)
        {
            var outcomes = await Task.WhenAll(providers.Select((provider, i) => OpenAtOnceAsync(_folder.File($"first-open-{round}-{i}.db"), provider, threads)));
            foreach (var (provider, errors) in providers.Zip(outcomes))
            {
                if (errors.Count > 0)
                {
                    _output.WriteLine($"round {round} ({provider}): {errors.Count} of {threads} opens failed; {errors[0].GetType().Name}: {errors[0].Message}");
                    failures.AddRange(errors.Select(e => $"round {round} ({provider}): {e.GetType().Name}: {e.Message}"));
                }
            }
        }

        var opens = round * providers.Length * threads;
        _output.WriteLine($"{round} rounds ({round * providers.Length} new files, {opens} opens) in {clock.Elapsed.TotalSeconds:F1} s; {failures.Count} opens failed");
        Assert.True(failures.Count == 0, $"{failures.Count} of {opens} concurrent first opens failed; first: {failures.FirstOrDefault()}");
    }

    // Defect 9: CommitAfterMilliseconds is checked only at the end of the next write, so an idle session keeps its
    // batch, and with it the write lock, for as long as it stays idle.
    [Fact]
    public async Task Defect9_commit_after_milliseconds_commits_an_idle_batch()
    {
        var path = _folder.File("idle.db");
        await using var a = Open(path, "PInvoke", o =>
        {
            o.Batching.CommitEvery = 0;
            o.Batching.CommitAfterMilliseconds = 100;
        });
        await using var b = Open(path, "PInvoke", o => o.Pragmas.BusyTimeout = 200); // opened first: Open itself needs the write lock (defect 7)
        await using var sa = await a.OpenSessionAsync();
        await using var sb = await b.OpenSessionAsync();
        var written = await sa.SelectXorInsertAsync(TestData.Hash(1), 10);
        await Task.Delay(1000);

        var (created, error) = await OutcomeAsync(() => sb.SelectXorInsertAsync(TestData.Hash(2), 10));
        Assert.True(error is null, $"1 s after a write with CommitAfterMilliseconds = 100, another database could not write: {error?.GetType().Name}: {error?.Message}");
        Assert.True(created.Created);
        Assert.Equal(written.Id, await sb.FindBlockAsync(TestData.Hash(1), 10));
    }

    // Defect 10a: the map load stops at the memory limit with an exception after loading part of the rows, so the
    // first lookup throws and a repeat of it succeeds from the half-loaded map.
    [Fact]
    public async Task Defect10a_a_lookup_over_the_memory_limit_behaves_the_same_when_repeated()
    {
        var path = _folder.File("limit.db");
        await using (var db = Open(path, "PInvoke", o =>
        {
            o.Index.Layout = BlockLayout.KeyMap;
            o.Batching.CommitEvery = 10_000;
        }))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = 0; i < 200_000; i++)
            {
                await session.InsertBlockAsync(TestData.Hash(i), 10);
            }
        }

        await using var limited = Open(path, "PInvoke", o => o.Index.KeyMapMemoryLimitMegabytes = 1);
        await using var s = await limited.OpenSessionAsync();
        var (first, firstError) = await OutcomeAsync(() => s.FindBlockAsync(TestData.Hash(0), 10));
        var (second, secondError) = await OutcomeAsync(() => s.FindBlockAsync(TestData.Hash(0), 10));
        _output.WriteLine($"first: {Describe(first, firstError)}; repeat: {Describe(second, secondError)}");
        Assert.True(
            firstError?.GetType() == secondError?.GetType() && first == second,
            $"the first lookup gave {Describe(first, firstError)} and the same lookup repeated gave {Describe(second, secondError)}");
        Assert.True(firstError is null or BlockDbConfigurationException, $"unexpected {firstError?.GetType().Name}");
    }

    // Defect 10b: the largest accepted KeyMapMemoryLimitMegabytes (1 TiB) is far more slots than one .NET array holds.
    [Fact]
    public void Defect10b_the_largest_key_map_limit_fits_in_one_array()
    {
        var slots = (long)IndexOptions.MaxKeyMapMemoryLimitMegabytes * 1048576 / 8;
        _output.WriteLine($"MaxKeyMapMemoryLimitMegabytes = {IndexOptions.MaxKeyMapMemoryLimitMegabytes}: {slots:N0} slots; Array.MaxLength = {Array.MaxLength:N0}");
        if (slots <= Array.MaxLength)
        {
            return;
        }

        var options = new BlockDbOptions { DataSource = _folder.File("max.db"), Index = { KeyMapMemoryLimitMegabytes = IndexOptions.MaxKeyMapMemoryLimitMegabytes } };
        var error = Record.Exception(options.Validate);
        Assert.True(
            error is BlockDbConfigurationException,
            $"KeyMapMemoryLimitMegabytes = {IndexOptions.MaxKeyMapMemoryLimitMegabytes} ({slots:N0} slots, Array.MaxLength {Array.MaxLength:N0}) passes validation");
    }

    private static IBlockDatabase Open(string path, string provider, Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = path };
        configure?.Invoke(options);
        return BlockDatabase.Open(options);
    }

    private static ISqliteConnection RawOpen(string path) =>
        BlockDbProviders.Get("PInvoke").Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));

    private static string? RawQuery(string path, string sql)
    {
        using var raw = RawOpen(path);
        return raw.QueryText(sql);
    }

    /// <summary>A KeyMap-layout row written with plain SQL: the hash as its decoded bytes; <paramref name="id"/> null lets SQLite choose.</summary>
    private static void RawInsert(ISqliteConnection raw, long? id, string hash, long size)
    {
        using var insert = raw.Prepare(id is null
            ? new SqlStatement("RawInsert", """INSERT INTO "Block" ("Hash", "Size") VALUES (@H, @S)""", "@H", "@S")
            : new SqlStatement("RawInsertAt", """INSERT INTO "Block" ("ID", "Hash", "Size") VALUES (@I, @H, @S)""", "@I", "@H", "@S"));
        var i = 1;
        if (id is { } value)
        {
            insert.BindInt64(i++, value);
        }

        insert.BindBlob(i++, Convert.FromBase64String(hash));
        insert.BindInt64(i, size);
        insert.ExecuteNonQuery();
    }

    /// <summary>Writes a row at <paramref name="id"/>; false (logged) when the file refuses it, which the tests accept as correct.</summary>
    private bool TryRawInsert(string path, long id, string hash, long size)
    {
        try
        {
            using var raw = RawOpen(path);
            RawInsert(raw, id, hash, size);
            return true;
        }
        catch (BlockDbException e)
        {
            _output.WriteLine($"The file refused a row at ID {id}: {e.Message}");
            return false;
        }
    }

    /// <summary>A KeyMap file (PInvoke) with blocks 1..<paramref name="count"/> at IDs 1..count, committed and closed.</summary>
    private static async Task CreateBlocksAsync(string path, int count)
    {
        await using var db = Open(path, "PInvoke", o => o.Index.Layout = BlockLayout.KeyMap);
        await using var session = await db.OpenSessionAsync();
        for (var i = 1; i <= count; i++)
        {
            Assert.Equal(i, (await session.SelectXorInsertAsync(TestData.Hash(i), 10)).Id);
        }

        await session.CommitAsync();
    }

    private static async Task<double> PagesPerLookupAsync(string path, int count, Func<byte[]> nextHash)
    {
        var hashes = Enumerable.Range(0, count).Select(_ => Convert.ToBase64String(nextHash())).ToArray();
        await using var db = Open(path, "PInvoke", o =>
        {
            o.Index.Layout = BlockLayout.KeyMap;
            o.Batching.CommitEvery = 0;
        });
        await using var session = await db.OpenSessionAsync();
        foreach (var hash in hashes)
        {
            await session.InsertBlockAsync(hash, 10);
        }

        await session.CommitAsync();
        Assert.Equal(1, await session.FindBlockAsync(hashes[0], 10));
        var before = session.ReadCacheStats()!.Value;
        const int lookups = 200;
        for (var i = 0; i < lookups; i++)
        {
            var n = (i * 7919) % count;
            Assert.Equal(n + 1, await session.FindBlockAsync(hashes[n], 10));
        }

        var reads = session.ReadCacheStats()!.Value.Since(before);
        return (double)(reads.Hits + reads.Misses) / lookups;
    }

    /// <summary>Opens a new file from <paramref name="threads"/> threads released together; returns the failures.</summary>
    private static async Task<List<Exception>> OpenAtOnceAsync(string path, string provider, int threads)
    {
        using var barrier = new Barrier(threads);
        var outcomes = await Task.WhenAll(Enumerable.Range(0, threads).Select(_ => Task.Factory.StartNew(
            () =>
            {
                barrier.SignalAndWait();
                try
                {
                    using var db = Open(path, provider);
                    return null;
                }
                catch (Exception e)
                {
                    return e;
                }
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default)));
        return [.. outcomes.OfType<Exception>()];
    }

    private static async Task RetryBusyAsync(Func<ValueTask<SelectXorInsertResult>> call)
    {
        while (true)
        {
            try
            {
                await call();
                return;
            }
            catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Busy)
            {
            }
        }
    }

    private static async Task<(T? Value, Exception? Error)> OutcomeAsync<T>(Func<ValueTask<T>> call)
    {
        try
        {
            return (await call(), null);
        }
        catch (Exception e)
        {
            return (default, e);
        }
    }

    private static (T? Value, Exception? Error) Outcome<T>(Func<T> call)
    {
        try
        {
            return (call(), null);
        }
        catch (Exception e)
        {
            return (default, e);
        }
    }

    private static string Describe(object? value, Exception? error) =>
        error is null ? $"returned {value ?? "null"}" : $"{error.GetType().Name}: {error.Message}";
}
