using BlockDb.Opening;
using Npgsql;

namespace BlockDb.Tests.PostgreSql;

/// <summary>
/// The PostgreSQL provider's set-based paths: many blocks and a whole file per round trip on sessions and the shared
/// repository, and bulk import by binary COPY per import transaction. What the conformance suite cannot show on one
/// connection: concurrent writers of the same blocks, a volume that starts being deleted between two calls or two import
/// transactions, a lost connection before a batch call.
/// </summary>
public sealed class PostgreSqlFastPathTests : PostgreSqlSchemaTestBase
{
    private static async IAsyncEnumerable<T> Stream<T>(IEnumerable<T> items)
    {
        foreach (var item in items)
        {
            yield return item;
        }

        await Task.CompletedTask;
    }

    [PostgresFact]
    public async Task Two_sessions_and_a_shared_session_batching_the_same_blocks_at_once_store_each_once_with_one_id()
    {
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var first = await db.OpenSessionAsync();
        await using var second = await db.OpenSessionAsync();
        await using var shared = db.OpenSharedSession();
        const int Rounds = 40;
        var created = 0;
        var ids = new Dictionary<int, long>();
        for (var round = 0; round < Rounds; round++)
        {
            // Three writers, the same 64 blocks (some twice) in three different orders, started together.
            var keys = Enumerable.Range(round * 48, 64).ToArray();
            var orders = new[] { keys, keys.Reverse().ToArray(), keys.OrderBy(k => (k * 7919) % 61).Concat(keys.Take(5)).ToArray() };
            var results = orders.Select(o => new SelectXorInsertResult[o.Length]).ToArray();
            using var start = new Barrier(3);
            var writers = new IBlockWriter[] { first, second, shared };
            var counts = await Task.WhenAll(Enumerable.Range(0, 3).Select(w => Task.Run(async () =>
            {
                start.SignalAndWait();
                return await writers[w].SelectXorInsertManyAsync(orders[w].Select(k => TestData.Block(k, 4096)).ToArray(), results[w]);
            })));

            created += counts.Sum();
            for (var w = 0; w < 3; w++)
            {
                for (var i = 0; i < orders[w].Length; i++)
                {
                    var id = results[w][i].Id;
                    Assert.Equal(id, ids.TryAdd(orders[w][i], id) ? id : ids[orders[w][i]]);
                }
            }

            Assert.Equal(counts.Sum(), results.SelectMany(r => r).Count(r => r.Created));
        }

        await using var check = await db.OpenSessionAsync();
        Assert.Equal(ids.Count, (await check.GetCountsAsync()).Blocks);
        Assert.Equal(ids.Count, created); // each block created by exactly one writer, once
        Assert.Equal(ids.Count, ids.Values.Distinct().Count());
        foreach (var (key, id) in ids)
        {
            Assert.Equal(id, await check.FindBlockAsync(new BlockKey(TestData.Bytes(key), 4096)));
        }

        Assert.True((await db.CheckAsync()).IsClean);
    }

    [PostgresFact]
    public async Task Two_imports_and_a_batching_session_over_the_same_blocks_at_once_store_each_block_once()
    {
        // Each session call is its own transaction. Writers that lock the same keys in different orders may deadlock;
        // the server then aborts one transaction (SQLSTATE 40P01, a transient BlockDbException) and, as an engine
        // would, that writer runs again: an import resumes from its input, a call is repeated. What was committed,
        // counted from the progress reports and the calls that returned, must add up to each block exactly once.
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        var keys = Enumerable.Range(0, 30_000).ToList();
        var shuffled = keys.OrderBy(k => (k * 40503L) % 30011).ToList();
        using var start = new Barrier(3);
        var imports = new[] { keys, shuffled }.Select(order => Task.Run(async () =>
        {
            start.SignalAndWait();
            long created = 0;
            for (var attempt = 1; ; attempt++)
            {
                var committed = new LastProgress();
                try
                {
                    var result = await db.ImportBlocksAsync(Stream(order.Select(k => new ImportBlock(new BlockKey(TestData.Bytes(k), 4096)))), new ImportOptions { ItemsPerTransaction = 4000, Progress = committed });
                    Assert.Equal(30_000, result.Read);
                    return created + result.Created;
                }
                catch (BlockDbException e) when (e.SqlState == "40P01" && attempt < 10)
                {
                    created += committed.Value?.Created ?? 0;
                }
            }
        })).ToList();
        var session = Task.Run(async () =>
        {
            await using var writer = await db.OpenSessionAsync();
            var created = 0;
            var results = new SelectXorInsertResult[500];
            start.SignalAndWait();
            for (var from = 29_500; from >= 0; from -= 2500)
            {
                for (var attempt = 1; ; attempt++)
                {
                    try
                    {
                        created += await writer.SelectXorInsertManyAsync(Enumerable.Range(from, 500).Select(k => TestData.Block(k, 4096)).ToArray(), results);
                        break;
                    }
                    catch (BlockDbException e) when (e.SqlState == "40P01" && attempt < 10)
                    {
                    }
                }
            }

            return created;
        });

        var done = await Task.WhenAll(imports);
        var byTheSession = await session;
        Assert.Equal(30_000, done.Sum() + byTheSession);
        await using var check = await db.OpenSessionAsync();
        Assert.Equal(30_000, (await check.GetCountsAsync()).Blocks);
        var results2 = new SelectXorInsertResult[30_000];
        Assert.Equal(0, await check.SelectXorInsertManyAsync(keys.Select(k => TestData.Block(k, 4096)).ToArray(), results2));
        Assert.Equal(30_000, results2.Select(r => r.Id).Distinct().Count());
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [PostgresFact]
    public async Task A_volume_deleted_between_import_transactions_fails_the_next_one_and_keeps_the_committed()
    {
        await using var db = Open();
        long volume, other;
        await using (var session = await db.OpenSessionAsync())
        {
            volume = await session.RegisterVolumeAsync("b-1.zip", VolumeState.Uploaded);
            other = await session.RegisterVolumeAsync("b-2.zip", VolumeState.Uploaded);
            await session.CommitAsync();
        }

        var progress = new DeleteAfterFirstCommit(ConnectionString, volume);
        var input = Enumerable.Range(0, 3000).Select(k => new ImportBlock(new BlockKey(TestData.Bytes(k), 100), volume));
        var refused = await Assert.ThrowsAsync<BlockDbConflictException>(async () =>
            await db.ImportBlocksAsync(Stream(input), new ImportOptions { ItemsPerTransaction = 1000, Progress = progress }));
        Assert.Contains("Deleting", refused.Message, StringComparison.Ordinal);

        await using var check = await db.OpenSessionAsync();
        Assert.Equal(1000, (await check.GetCountsAsync()).Blocks); // the first transaction only
        Assert.Equal(1000, (await check.GetVolumeAsync(volume)).Blocks);

        // Blocks that exist keep their volume and need none that can receive them; a new one does.
        var again = await db.ImportBlocksAsync(Stream(Enumerable.Range(0, 1000).Select(k => new ImportBlock(new BlockKey(TestData.Bytes(k), 100), volume))));
        Assert.Equal((1000L, 0L, 1000L), (again.Read, again.Created, again.Existing));
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () =>
            await db.ImportBlocksAsync(Stream(new[] { new ImportBlock(new BlockKey(TestData.Bytes(1), 100), 999_999), new ImportBlock(new BlockKey(TestData.Bytes(5000), 100), 999_999) })));
        var moved = await db.ImportBlocksAsync(Stream(Enumerable.Range(1000, 3000).Select(k => new ImportBlock(new BlockKey(TestData.Bytes(k), 100), other))));
        Assert.Equal(3000, moved.Created);
        Assert.Equal(4000, (await check.GetCountsAsync()).Blocks);
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [PostgresFact]
    public async Task A_volume_deleted_between_batch_calls_refuses_only_the_new_blocks_and_the_batch_goes_on()
    {
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("b-1.zip", VolumeState.Uploaded);
        var results = new SelectXorInsertResult[8];
        Assert.Equal(4, await session.SelectXorInsertManyAsync(Enumerable.Range(0, 4).Select(k => TestData.Block(k, 100)).ToArray(), results, volume));
        await session.CommitAsync();

        await using (var other = Open())
        await using (var lifecycle = await other.OpenSessionAsync())
        {
            await lifecycle.SetVolumeStateAsync(volume, VolumeState.Deleting);
        }

        Assert.Equal(1, await session.SelectXorInsertManyAsync(new[] { TestData.Block(50, 100) }, results)); // no volume: written
        var pending = session.PendingWrites;
        BlockKey[] mixed = [TestData.Block(0, 100), TestData.Block(1, 100), TestData.Block(10, 100), TestData.Block(2, 100)];
        Array.Clear(results);
        var refused = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.SelectXorInsertManyAsync(mixed, results, volume));
        Assert.Contains("Deleting", refused.Message, StringComparison.Ordinal);
        Assert.True(results[0].Id > 0 && results[1].Id > 0); // the known blocks before the new one, as one call per block leaves them
        Assert.Equal(pending, session.PendingWrites); // nothing written, nothing lost: the batch goes on
        Assert.Equal(0, await session.SelectXorInsertManyAsync(mixed.Where(b => b != mixed[2]).ToArray(), results, volume)); // known blocks need no live volume
        await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.AddBlocksetAsync(mixed, results, volumeId: 999_999));
        await Assert.ThrowsAsync<BlockDbConflictException>(async () => await session.AddBlocksetAsync(new[] { TestData.Block(0, 100) }, results)); // its block is in a volume being deleted

        await session.CommitAsync();
        var counts = await session.GetCountsAsync();
        Assert.Equal((5L, 0L), (counts.Blocks, counts.Blocksets));
    }

    [PostgresFact]
    public async Task Calls_whose_blocks_are_all_known_write_nothing_and_leave_no_transaction_open()
    {
        var offset = 0;
        foreach (var strategy in Enum.GetValues<SelectXorInsertStrategy>())
        {
            var name = "blockdb-known-" + Guid.NewGuid().ToString("N");
            await using var db = Open(
                o =>
                {
                    o.SelectXorInsert = strategy;
                    o.Batching.CommitEvery = 100;
                },
                new NpgsqlConnectionStringBuilder(ConnectionString) { ApplicationName = name }.ConnectionString);
            await using var session = await db.OpenSessionAsync();
            var blocks = Enumerable.Range(offset, 16).Select(k => TestData.Block(k, 4096)).ToArray();
            offset += 16;
            var results = new SelectXorInsertResult[16];
            Assert.Equal(16, await session.SelectXorInsertManyAsync(blocks, results));
            Assert.Equal(16, session.PendingWrites);
            await session.CommitAsync();

            Assert.Equal(0, await session.SelectXorInsertManyAsync(blocks, results));
            Assert.Equal(0, session.PendingWrites);
            Assert.Equal("idle", SessionState(name)); // no transaction left open by a call that wrote nothing
            var file = await session.AddBlocksetAsync(blocks, results);
            Assert.True(file > 0);
            Assert.Equal(1, session.PendingWrites); // the blockset, not its known blocks
            Assert.Equal("idle in transaction", SessionState(name));
            await session.RollbackAsync();
            Assert.Equal(0, (await session.GetCountsAsync()).Blocksets);
        }
    }

    /// <summary>The server's state of the one connection with that application name.</summary>
    private static string SessionState(string applicationName)
    {
        using var connection = new NpgsqlConnection(PostgreSqlServer.ConnectionString);
        connection.Open();
        using var command = new NpgsqlCommand("SELECT state FROM pg_stat_activity WHERE application_name = $1", connection);
        command.Parameters.Add(new NpgsqlParameter<string> { TypedValue = applicationName });
        return (string)command.ExecuteScalar()!;
    }

    [PostgresFact]
    public async Task Batch_calls_run_again_on_a_new_connection_after_a_loss_with_nothing_pending()
    {
        var victim = "blockdb-fast-" + Guid.NewGuid().ToString("N");
        await using var db = Open(o => o.Batching.CommitEvery = 0, new NpgsqlConnectionStringBuilder(ConnectionString) { ApplicationName = victim }.ConnectionString);
        await using var session = await db.OpenSessionAsync();
        var results = new SelectXorInsertResult[4];
        await session.SelectXorInsertManyAsync(Enumerable.Range(0, 4).Select(k => TestData.Block(k)).ToArray(), results);
        await session.CommitAsync();
        PostgreSqlServer.Execute(PostgreSqlServer.ConnectionString!, $"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{victim}'");

        Assert.Equal(2, await session.SelectXorInsertManyAsync(Enumerable.Range(2, 4).Select(k => TestData.Block(k)).ToArray(), results));
        Assert.Equal(2, session.PendingWrites);
        PostgreSqlServer.Execute(PostgreSqlServer.ConnectionString!, $"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{victim}'");

        // Writes were pending: the batch is lost, typed, and not written twice.
        var lost = await Assert.ThrowsAsync<BlockDbBatchRolledBackException>(async () => await session.AddBlocksetAsync(Enumerable.Range(0, 4).Select(k => TestData.Block(k)).ToArray(), results));
        Assert.Equal(2, lost.LostWrites);
        Assert.True(lost.SqlState is "57P01" || lost.SqlState?.StartsWith("08", StringComparison.Ordinal) == true, lost.SqlState);
        var counts = await session.GetCountsAsync();
        Assert.Equal((4L, 0L), (counts.Blocks, counts.Blocksets));
    }

    [PostgresFact]
    public async Task Blocksets_import_in_bulk_skip_known_full_hashes_and_refuse_a_block_of_a_volume_being_deleted()
    {
        await using var db = Open();
        long doomed;
        await using (var session = await db.OpenSessionAsync())
        {
            doomed = await session.RegisterVolumeAsync("doomed.zip", VolumeState.Uploaded);
            await session.SelectXorInsertAsync(TestData.Block(900, 100), doomed);
            await session.SetVolumeStateAsync(doomed, VolumeState.Deleting);
            await session.CommitAsync();
        }

        await db.ImportBlocksAsync(Stream(Enumerable.Range(0, 100).Select(k => new ImportBlock(new BlockKey(TestData.Bytes(k), 100)))));
        BlockKey Key(int k) => TestData.Block(k, 100);
        var files = new List<ImportBlockset>
        {
            new([Key(1), Key(2), Key(1)], TestData.Bytes(5000)),
            new([Key(1), Key(2), Key(1)], TestData.Bytes(5000)), // the same content again: skipped
            new([Key(3)]),                                        // no full hash: always written
            new([Key(3)]),
            new([], TestData.Bytes(5001)),                        // an empty file
            new([Key(4), Key(5)], TestData.Bytes(5000)),          // the same full hash, another length: written
        };
        var result = await db.ImportBlocksetsAsync(Stream(files));
        Assert.Equal((6L, 5L, 1L, 1), (result.Read, result.Created, result.Existing, result.Transactions));

        await using var check = await db.OpenSessionAsync();
        var first = (await check.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(5000)), 300))!.Value;
        Assert.Equal([Key(1).Hash.ToString(), Key(2).Hash.ToString(), Key(1).Hash.ToString()], (await check.ListBlocksetBlocksAsync(first)).Select(b => b.Block.Hash.ToString()));
        Assert.Equal(0, (await check.GetBlocksetAsync((await check.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(5001)), 0))!.Value)).BlockCount);

        var doomedFile = new ImportBlockset([Key(7), Key(900), Key(8)], TestData.Bytes(6000));
        var conflict = await Assert.ThrowsAsync<BlockDbConflictException>(async () => await db.ImportBlocksetsAsync(Stream(new[] { new ImportBlockset([Key(9)], TestData.Bytes(6001)), doomedFile })));
        Assert.Contains("Block 1 of blockset 1", conflict.Message, StringComparison.Ordinal);
        Assert.Equal(5, (await check.GetCountsAsync()).Blocksets); // the whole transaction rolled back
        Assert.True((await db.CheckAsync()).IsClean);
    }

    /// <summary>The last progress an import reported (synchronously, after each commit).</summary>
    private sealed class LastProgress : IProgress<ImportProgress>
    {
        public ImportProgress? Value { get; private set; }

        public void Report(ImportProgress value) => Value = value;
    }

    /// <summary>Moves a volume to Deleting from another connection right after the import's first commit (reported synchronously).</summary>
    private sealed class DeleteAfterFirstCommit(string connectionString, long volumeId) : IProgress<ImportProgress>
    {
        public void Report(ImportProgress value)
        {
            if (value.Transactions != 1)
            {
                return;
            }

            using var db = BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = connectionString });
            using var session = db.OpenSessionAsync().AsTask().GetAwaiter().GetResult();
            session.SetVolumeStateAsync(volumeId, VolumeState.Deleting).AsTask().GetAwaiter().GetResult();
            session.CommitAsync().AsTask().GetAwaiter().GetResult();
        }
    }
}
