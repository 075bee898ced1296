using System.Collections.Concurrent;
using BlockDb.Opening;
using Npgsql;

namespace BlockDb.Tests.PostgreSql;

/// <summary>
/// The PostgreSQL shared session's gathered writes [S4]: concurrent select-xor-inserts and blocksets sent by a few lanes
/// as batches of one round trip and one commit, each caller getting its own results and its own refusal, nothing
/// acknowledged before its commit. To put chosen calls in one batch, a test holds the lifecycle lock exclusively (a
/// write that names a volume or a blockset takes it shared): the one lane (<c>MaxReaders</c> 1) waits inside its first
/// batch while the next calls queue behind it, and they go as the next batch once the lock is let go.
/// </summary>
public sealed class PostgreSqlGatheredWritesTests : PostgreSqlSchemaTestBase
{
    private const string LockKey = "1112297284, hashtext(current_schema())";

    [PostgresFact]
    public async Task Sixteen_concurrent_callers_over_overlapping_keys_share_commits_and_get_one_id_per_key_in_their_order()
    {
        const int Tasks = 16, Calls = 40, Shared = 64;
        await using var db = Open();
        await using var shared = db.OpenSharedSession();
        var seen = new ConcurrentBag<(int Key, long Id, bool Created)>();

        // Every call makes one block of its own (so a route committing per write would commit at least once per call)
        // and asks for shared keys in another order per task.
        await Task.WhenAll(Enumerable.Range(0, Tasks).Select(t => Task.Run(async () =>
        {
            for (var c = 0; c < Calls; c++)
            {
                var own = 1_000_000 + (t * Calls) + c;
                if (c % 2 == 0)
                {
                    var one = await shared.SelectXorInsertAsync(TestData.Block(own, 10));
                    seen.Add((own, one.Id, one.Created));
                    var key = (t * 7 + c) % Shared;
                    var other = await shared.SelectXorInsertAsync(TestData.Block(key, 10));
                    seen.Add((key, other.Id, other.Created));
                }
                else
                {
                    var keys = new[] { own, (t + c) % Shared, (t * 3 + c) % Shared, (Shared - 1 - t - c + (Shared * 4)) % Shared, (t + c) % Shared };
                    var results = new SelectXorInsertResult[keys.Length];
                    await shared.SelectXorInsertManyAsync(keys.Select(k => TestData.Block(k, 10)).ToArray(), results);
                    for (var i = 0; i < keys.Length; i++)
                    {
                        seen.Add((keys[i], results[i].Id, results[i].Created));
                    }

                    // A block listed twice in one call has one ID, created at its first place only.
                    Assert.Equal(results[1].Id, results[4].Id);
                    Assert.False(results[4].Created);
                }
            }
        })));

        var calls = Tasks * Calls * 3 / 2;
        var perKey = seen.GroupBy(s => s.Key).ToDictionary(g => g.Key, g => g.ToList());
        Assert.Equal(Shared + (Tasks * Calls), perKey.Count);
        Assert.All(perKey.Values, uses => Assert.Single(uses.Select(u => u.Id).Distinct()));
        Assert.All(perKey.Values, uses => Assert.Single(uses, u => u.Created));
        Assert.Equal(perKey.Count, perKey.Values.Select(u => u[0].Id).Distinct().Count());
        Assert.Equal(perKey.Count, shared.AcknowledgedWrites);
        Assert.True(shared.CommittedBatches < shared.AcknowledgedWrites, $"{shared.CommittedBatches} commits for {calls} calls making {shared.AcknowledgedWrites} blocks: the callers were not gathered.");

        await using var session = await db.OpenSessionAsync();
        Assert.Equal(perKey.Count, (await session.GetCountsAsync()).Blocks);
        foreach (var (key, uses) in perKey)
        {
            Assert.Equal(uses[0].Id, await session.FindBlockAsync(TestData.Block(key, 10)));
        }
    }

    [PostgresFact]
    public async Task A_refused_volume_fails_only_its_caller_in_a_gathered_batch()
    {
        var app = "blockdb-gather-" + Guid.NewGuid().ToString("N");
        await using var db = Open(o => o.GroupCommit.MaxReaders = 1, WithApplicationName(app));
        await using var shared = db.OpenSharedSession();
        var live = await shared.RegisterVolumeAsync("live");
        var going = await shared.RegisterVolumeAsync("going");
        var known = await shared.SelectXorInsertAsync(TestData.Block(1, 10));
        await shared.SetVolumeStateAsync(going, VolumeState.Deleting);

        await using var hold = await HoldLifecycleLockAsync();
        var blocker = shared.SelectXorInsertAsync(TestData.Block(100, 10), live).AsTask();
        await WaitForWaitingLaneAsync(app);
        var refusedResults = new SelectXorInsertResult[3];
        var refused = shared.SelectXorInsertManyAsync(new[] { TestData.Block(1, 10), TestData.Block(2, 10), TestData.Block(3, 10) }, refusedResults, going).AsTask();
        var sharedKey = shared.SelectXorInsertAsync(TestData.Block(4, 10), going).AsTask();
        var goodResults = new SelectXorInsertResult[2];
        var good = shared.SelectXorInsertManyAsync(new[] { TestData.Block(2, 10), TestData.Block(4, 10) }, goodResults, live).AsTask();
        await hold.DisposeAsync();

        await blocker;
        Assert.Equal(2, await good);
        Assert.True(goodResults[0].Created && goodResults[1].Created);

        // Refused at its first block that was not known: block 1 existed, block 2 was made by another caller of the
        // batch (a refused caller runs after the others), block 3 is new; its results before the failing block are filled.
        var e = await Assert.ThrowsAsync<BlockDbConflictException>(() => refused);
        Assert.Contains($"Volume {going}", e.Message, StringComparison.Ordinal);
        Assert.Equal(new SelectXorInsertResult(known.Id, false), refusedResults[0]);
        Assert.Equal(new SelectXorInsertResult(goodResults[0].Id, false), refusedResults[1]);
        Assert.Equal(default, refusedResults[2]);

        // A refused caller whose block another caller of the batch made gets that block, not created by it (as after that caller).
        var found = await sharedKey;
        Assert.Equal(goodResults[1].Id, found.Id);
        Assert.False(found.Created);

        await using var session = await db.OpenSessionAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(3, 10)));
        Assert.Equal(live, (await session.GetBlockAsync(goodResults[0].Id)).VolumeId);
        Assert.Equal(4, (await session.GetCountsAsync()).Blocks);
    }

    [PostgresFact]
    public async Task A_refused_blockset_fails_only_its_caller_and_the_others_in_its_batch_are_written()
    {
        var app = "blockdb-gather-" + Guid.NewGuid().ToString("N");
        await using var db = Open(o => o.GroupCommit.MaxReaders = 1, WithApplicationName(app));
        await using var shared = db.OpenSharedSession();
        var live = await shared.RegisterVolumeAsync("live");
        var going = await shared.RegisterVolumeAsync("going");
        await shared.SelectXorInsertAsync(TestData.Block(50, 10), going);
        await shared.SetVolumeStateAsync(going, VolumeState.Deleting);

        await using var hold = await HoldLifecycleLockAsync();
        var blocker = shared.SelectXorInsertAsync(TestData.Block(100, 10), live).AsTask();
        await WaitForWaitingLaneAsync(app);
        var first = shared.AddBlocksetAsync(new[] { TestData.Block(1, 10), TestData.Block(2, 10) }, new SelectXorInsertResult[2], TestData.Bytes(900), live).AsTask();
        var inGoing = shared.AddBlocksetAsync(new[] { TestData.Block(3, 10), TestData.Block(50, 10) }, new SelectXorInsertResult[2], TestData.Bytes(901), live).AsTask();
        var refusedVolume = shared.AddBlocksetAsync(new[] { TestData.Block(4, 10) }, new SelectXorInsertResult[1], TestData.Bytes(902), going).AsTask();
        var empty = shared.AddBlocksetAsync(ReadOnlyMemory<BlockKey>.Empty, Memory<SelectXorInsertResult>.Empty).AsTask();
        var lastResults = new SelectXorInsertResult[2];
        var last = shared.AddBlocksetAsync(new[] { TestData.Block(2, 10), TestData.Block(5, 10) }, lastResults, TestData.Bytes(903), live).AsTask();
        await hold.DisposeAsync();
        await blocker;

        var conflict = await Assert.ThrowsAsync<BlockDbConflictException>(() => inGoing);
        Assert.Contains("Block 1 of the blockset", conflict.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<BlockDbConflictException>(() => refusedVolume);
        var ids = new[] { await first, await empty, await last };
        Assert.Equal(3, ids.Distinct().Count());
        Assert.False(lastResults[0].Created);
        Assert.True(lastResults[1].Created);

        await using var session = await db.OpenSessionAsync();
        Assert.Equal(new BlocksetInfo(ids[0], 20, Convert.ToBase64String(TestData.Bytes(900).Bytes), 2), await session.GetBlocksetAsync(ids[0]));
        Assert.Equal(0, (await session.GetBlocksetAsync(ids[1])).Length);
        Assert.Equal(lastResults.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(ids[2])).Select(b => b.BlockId));
        Assert.Equal(3, (await session.GetCountsAsync()).Blocksets);

        // The refused blocksets' new blocks are not written: a shared write call is whole (ISharedBlockSession).
        Assert.Null(await session.FindBlockAsync(TestData.Block(3, 10)));
        Assert.Null(await session.FindBlockAsync(TestData.Block(4, 10)));
    }

    [PostgresFact]
    public async Task A_refused_blockset_alone_commits_none_of_its_new_blocks()
    {
        // A caller told its file failed uploads none of its blocks; a new block committed anyway would be found by the
        // next file (not created, so not uploaded) and named by its blockset with no data behind it.
        await using var db = Open();
        await using var shared = db.OpenSharedSession();
        var live = await shared.RegisterVolumeAsync("live");
        var going = await shared.RegisterVolumeAsync("going");
        await shared.SelectXorInsertAsync(TestData.Block(50, 10), going);
        await shared.SetVolumeStateAsync(going, VolumeState.Deleting);

        await Assert.ThrowsAsync<BlockDbConflictException>(() => shared.AddBlocksetAsync(new[] { TestData.Block(3, 10), TestData.Block(50, 10) }, new SelectXorInsertResult[2], TestData.Bytes(901), live).AsTask());

        Assert.Null(await shared.FindBlockAsync(TestData.Block(3, 10)));
        Assert.Equal(new BlockDbCounts(1, 0, 0), await shared.GetCountsAsync());
    }

    [PostgresFact]
    public async Task A_block_new_to_a_refused_blockset_and_to_a_later_caller_in_its_batch_is_created_for_the_later_caller()
    {
        var app = "blockdb-gather-" + Guid.NewGuid().ToString("N");
        await using var db = Open(o => o.GroupCommit.MaxReaders = 1, WithApplicationName(app));
        await using var shared = db.OpenSharedSession();
        var live = await shared.RegisterVolumeAsync("live");
        var going = await shared.RegisterVolumeAsync("going");
        await shared.SelectXorInsertAsync(TestData.Block(50, 10), going);
        await shared.SetVolumeStateAsync(going, VolumeState.Deleting);

        await using var hold = await HoldLifecycleLockAsync();
        var blocker = shared.SelectXorInsertAsync(TestData.Block(100, 10), live).AsTask();
        await WaitForWaitingLaneAsync(app);
        var refused = shared.AddBlocksetAsync(new[] { TestData.Block(7, 10), TestData.Block(50, 10) }, new SelectXorInsertResult[2], TestData.Bytes(901), live).AsTask();
        var later = shared.SelectXorInsertAsync(TestData.Block(7, 10), live).AsTask();
        await hold.DisposeAsync();
        await blocker;

        await Assert.ThrowsAsync<BlockDbConflictException>(() => refused);
        var written = await later;

        // The refused caller uploads nothing, so the block is the later caller's to upload.
        Assert.True(written.Created);
        Assert.Equal(written.Id, await shared.FindBlockAsync(TestData.Block(7, 10)));
    }

    [PostgresFact]
    public async Task A_batch_whose_connection_is_killed_fails_its_blockset_callers_with_the_sqlstate_commits_none_of_them_and_resends_the_rest()
    {
        var app = "blockdb-gather-" + Guid.NewGuid().ToString("N");
        await using var db = Open(o => o.GroupCommit.MaxReaders = 1, WithApplicationName(app));
        await using var shared = db.OpenSharedSession();
        var live = await shared.RegisterVolumeAsync("live");

        var hold = await HoldLifecycleLockAsync();
        try
        {
            var blocker = shared.AddBlocksetAsync(new[] { TestData.Block(100, 10) }, new SelectXorInsertResult[1], default, live).AsTask();
            var killed = new List<int> { await WaitForWaitingLaneAsync(app) };
            var files = Enumerable.Range(0, 3)
                .Select(f => shared.AddBlocksetAsync(new[] { TestData.Block(10 * f, 10), TestData.Block(10 * f + 1, 10) }, new SelectXorInsertResult[2], TestData.Bytes(f), live).AsTask())
                .ToList();
            var plain = shared.SelectXorInsertAsync(TestData.Block(1000, 10), live).AsTask();

            // The first batch (the blocker) dies; then the second (the files and the plain select-xor-insert).
            Terminate(killed[0]);
            await AssertConnectionLostAsync(blocker);
            killed.Add(await WaitForWaitingLaneAsync(app, killed));
            Terminate(killed[1]);
            foreach (var file in files)
            {
                await AssertConnectionLostAsync(file);
            }

            // The plain select-xor-insert is sent again on a new connection, and waits there for the lock.
            await WaitForWaitingLaneAsync(app, killed);
            Assert.False(plain.IsCompleted);
            await hold.DisposeAsync();
            var written = await plain;
            Assert.True(written.Created);

            await using var session = await db.OpenSessionAsync();
            Assert.Equal(new BlockDbCounts(1, 0, 0), await session.GetCountsAsync());
            Assert.Equal(written.Id, await session.FindBlockAsync(TestData.Block(1000, 10)));
        }
        finally
        {
            await hold.DisposeAsync();
        }
    }

    [PostgresFact]
    public async Task Disposing_during_gathered_writes_leaves_no_call_pending_and_loses_no_acknowledged_write()
    {
        await using var db = Open();
        var shared = db.OpenSharedSession();
        var acknowledged = new ConcurrentBag<(int Key, long Id)>();
        var inFlight = new Task[16];
        using var started = new CountdownEvent(16);
        var callers = Enumerable.Range(0, 16).Select(t => Task.Run(async () =>
        {
            started.Signal();
            for (var c = 0; ; c++)
            {
                var key = (t * 100_000) + c;
                var results = new SelectXorInsertResult[1];
                Task call = c % 3 == 2
                    ? shared.AddBlocksetAsync(new[] { TestData.Block(key, 10) }, results).AsTask()
                    : shared.SelectXorInsertManyAsync(new[] { TestData.Block(key, 10) }, results).AsTask();
                Volatile.Write(ref inFlight[t], call);
                try
                {
                    await call;
                }
                catch (ObjectDisposedException)
                {
                    return;
                }

                acknowledged.Add((key, results[0].Id));
            }
        })).ToList();
        started.Wait();
        await Task.Delay(300);
        await shared.DisposeAsync();
        Assert.All(inFlight, call => Assert.True(call is null || call.IsCompleted, "a call was still pending when dispose returned"));
        await Task.WhenAll(callers);
        Assert.NotEmpty(acknowledged);

        await using var session = await db.OpenSessionAsync();
        foreach (var (key, id) in acknowledged)
        {
            Assert.Equal(id, await session.FindBlockAsync(TestData.Block(key, 10)));
        }
    }

    [PostgresFact]
    public async Task Gathered_writes_beside_imports_of_the_same_blocks_never_deadlock_on_the_server()
    {
        // A database of its own, so the server's deadlock counter counts only this test's transactions. Each batch inserts
        // its blocks in one statement in (hash, size) order, as an import's merge does: no two can wait in a cycle.
        var connectionString = PostgreSqlServer.CreateDatabase(out var database);
        try
        {
            const int Keys = 6000;
            await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = connectionString }))
            {
                await using var shared = db.OpenSharedSession();
                var imports = Enumerable.Range(0, 4).Select(w => Task.Run(async () =>
                {
                    var order = Enumerable.Range(0, Keys).OrderBy(k => (k * (40503L + w)) % 6007).Select(k => new ImportBlock(TestData.Block(k, 4096)));
                    return (await db.ImportBlocksAsync(Stream(order), new ImportOptions { ItemsPerTransaction = 1500 })).Read;
                }));
                var writers = Enumerable.Range(0, 16).Select(t => Task.Run(async () =>
                {
                    for (var c = 0; c < 30; c++)
                    {
                        var keys = Enumerable.Range(0, 25).Select(i => TestData.Block((((t * 30) + c) * 197 + (i * 241)) % Keys, 4096)).ToArray();
                        var results = new SelectXorInsertResult[keys.Length];
                        if (c % 3 == 0)
                        {
                            await shared.AddBlocksetAsync(keys, results);
                        }
                        else
                        {
                            await shared.SelectXorInsertManyAsync(keys, results);
                        }
                    }
                }));
                Assert.All(await Task.WhenAll(imports), read => Assert.Equal(Keys, read));
                await Task.WhenAll(writers);

                await using var check = await db.OpenSessionAsync();
                Assert.Equal(Keys, (await check.GetCountsAsync()).Blocks);
                Assert.True((await db.CheckAsync()).IsClean);
            }

            Assert.Equal(0, await PostgreSqlServer.DeadlocksAfterDisconnectAsync(database));
        }
        finally
        {
            PostgreSqlServer.DropDatabase(database);
        }
    }

    private static async IAsyncEnumerable<T> Stream<T>(IEnumerable<T> items)
    {
        foreach (var item in items)
        {
            yield return item;
        }

        await Task.CompletedTask;
    }

    private string WithApplicationName(string app) => new NpgsqlConnectionStringBuilder(ConnectionString) { ApplicationName = app }.ConnectionString;

    /// <summary>Takes the lifecycle lock exclusively on a connection of the test's own (its dispose lets it go, by closing that connection).</summary>
    private async Task<NpgsqlConnection> HoldLifecycleLockAsync()
    {
        var connection = new NpgsqlConnection(new NpgsqlConnectionStringBuilder(ConnectionString) { Pooling = false }.ConnectionString);
        await connection.OpenAsync();
        await using var command = new NpgsqlCommand($"SELECT pg_advisory_lock({LockKey})", connection);
        await command.ExecuteNonQueryAsync();
        return connection;
    }

    /// <summary>Waits until a connection of the database (its one lane), other than those <paramref name="gone"/>, waits for a lock; returns its backend's PID.</summary>
    private static async Task<int> WaitForWaitingLaneAsync(string app, IReadOnlyList<int>? gone = null)
    {
        await using var connection = new NpgsqlConnection(PostgreSqlServer.ConnectionString);
        await connection.OpenAsync();
        for (var wait = 0; wait < 1200; wait++)
        {
            await using var command = new NpgsqlCommand("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND pid <> ALL($2)", connection)
            {
                Parameters = { new() { Value = app }, new() { Value = (gone ?? []).ToArray() } },
            };
            if (await command.ExecuteScalarAsync() is int pid)
            {
                return pid;
            }

            await Task.Delay(50);
        }

        throw new TimeoutException("The lane never waited for the lifecycle lock.");
    }

    private static void Terminate(int pid) =>
        PostgreSqlServer.Execute(PostgreSqlServer.ConnectionString!, $"SELECT pg_terminate_backend({pid})");

    private static async Task AssertConnectionLostAsync<T>(Task<T> call)
    {
        var e = await Assert.ThrowsAsync<BlockDbException>(() => call);
        Assert.NotNull(e.SqlState);
        Assert.True(e.SqlState is "57P01" || e.SqlState.StartsWith("08", StringComparison.Ordinal), e.SqlState);
        Assert.Null(e.SqliteErrorCode);
    }
}
