using BlockDb.Opening;

namespace BlockDb.Tests.PostgreSql;

/// <summary>
/// Bulk imports running at once on one server (each its own connection and transactions): overlapping inputs in
/// different orders. The block merges take the rows they insert in (hash, size) order, so no import waits in a cycle with
/// another: the server's deadlock detector (SQLSTATE 40P01) never fires, and each block is stored once. A session's open
/// batch can still close a cycle with a merge; the merge then runs again from its savepoint. (Blockset merges insert only
/// rows with new IDs, so they never wait for another transaction's rows.)
/// </summary>
public sealed class PostgreSqlConcurrentImportTests : PostgreSqlSchemaTestBase
{
    private const int Imports = 4;

    [PostgresFact]
    public async Task Four_imports_of_overlapping_blocks_in_different_orders_at_once_never_deadlock_on_the_server_and_store_each_block_once()
    {
        // A database of its own: the server's deadlock counter for it counts only these imports. The merge takes a
        // deadlock's victim back to its savepoint and runs it again, so an import can finish although the server aborted
        // its merge; only the server's count shows whether the merges waited for each other in a cycle.
        var connectionString = PostgreSqlServer.CreateDatabase(out var database);
        try
        {
            var (created, stored) = await ImportTogetherAsync(connectionString);
            Assert.Equal(stored.Expected, created); // each block created by exactly one import
            Assert.Equal(stored.Expected, stored.Counted);
            Assert.Equal(0, await PostgreSqlServer.DeadlocksAfterDisconnectAsync(database));
        }
        finally
        {
            PostgreSqlServer.DropDatabase(database);
        }
    }

    /// <summary>
    /// Rounds of four imports started together, import w reading keys [from + w * 3000, + 12,000) (each overlaps the next
    /// three): ascending, descending and two shuffles, transactions of 1,500 blocks. Returns the blocks the imports
    /// created, the distinct keys and the blocks stored; the database is disposed (its connections closed) on return.
    /// </summary>
    private static async Task<(long Created, (long Expected, long Counted) Stored)> ImportTogetherAsync(string connectionString)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = connectionString });
        const int Rounds = 6;
        const int PerImport = 12_000;
        var created = 0L;
        var all = new HashSet<int>();
        for (var round = 0; round < Rounds; round++)
        {
            var from = round * 100_000;
            var orders = Enumerable.Range(0, Imports).Select(w => Order(Enumerable.Range(from + (w * 3000), PerImport), w)).ToArray();
            all.UnionWith(orders.SelectMany(o => o));
            var results = await Together(orders, order => db.ImportBlocksAsync(Stream(order.Select(k => new ImportBlock(new BlockKey(TestData.Bytes(k), 4096)))), new ImportOptions { ItemsPerTransaction = 1500 }).AsTask());
            Assert.All(results, r => Assert.Equal(PerImport, r.Read));
            created += results.Sum(r => r.Created);
        }

        Assert.True((await db.CheckAsync()).IsClean);
        await using var check = await db.OpenSessionAsync();
        return (created, (all.Count, (await check.GetCountsAsync()).Blocks));
    }

    [PostgresFact]
    public async Task Imports_beside_a_batching_session_that_holds_the_same_blocks_uncommitted_finish_without_deadlock()
    {
        // The session keeps one transaction across calls (CommitEvery 1,000) and takes its blocks in its callers' order,
        // high keys first: no order inside a merge avoids a cycle with it (the merge waits for a block the session
        // holds, the session's next call for a block the merge inserted). The server aborts one of them (40P01); the
        // import must not be the one that fails: it takes its merge back to before it and runs it again. The session,
        // as an engine does with a lost batch, writes its lost calls again.
        await using var db = Open(o => o.Batching.CommitEvery = 10_000);
        const int Rounds = 3;
        const int Keys = 30_000;
        for (var round = 0; round < Rounds; round++)
        {
            var keys = Enumerable.Range(round * Keys, Keys).ToArray();
            var inputs = new[] { keys, Order(keys, 2), null };
            var results = await Together(inputs, async order => order is null
                ? await WriteHighKeysFirstAsync(db, keys)
                : (await db.ImportBlocksAsync(Stream(order.Select(k => new ImportBlock(new BlockKey(TestData.Bytes(k), 4096)))), new ImportOptions { ItemsPerTransaction = 4000 })).Read);
            Assert.Equal(new long[] { Keys, Keys, Keys / 5 }, results);
        }

        await using var check = await db.OpenSessionAsync();
        Assert.Equal(Rounds * Keys, (await check.GetCountsAsync()).Blocks);
        Assert.True((await db.CheckAsync()).IsClean);
    }

    /// <summary>
    /// A session writing a fifth of <paramref name="keys"/>, 500 per call from the top down, in one transaction (committed
    /// at the end); a batch the server aborted (40P01) is written again from its first call, as an engine would.
    /// </summary>
    private static async Task<long> WriteHighKeysFirstAsync(IBlockDatabase db, int[] keys)
    {
        await using var writer = await db.OpenSessionAsync();
        var results = new SelectXorInsertResult[500];
        var calls = Enumerable.Range(0, keys.Length / 2500).Select(c => keys[^((c * 2500) + 500)..^(c * 2500)]).ToList();
        for (var attempt = 1; ; attempt++)
        {
            try
            {
                foreach (var call in calls)
                {
                    await writer.SelectXorInsertManyAsync(call.Select(k => TestData.Block(k, 4096)).ToArray(), results);
                }

                await writer.CommitAsync();
                return calls.Sum(c => c.Length);
            }
            catch (BlockDbBatchRolledBackException e) when (e.SqlState == "40P01" && attempt < 10)
            {
            }
        }
    }

    /// <summary>Ascending, descending, then shuffles that differ per import.</summary>
    private static int[] Order(IEnumerable<int> keys, int import) => import switch
    {
        0 => keys.ToArray(),
        1 => keys.Reverse().ToArray(),
        _ => keys.OrderBy(k => (k * (40503L + import)) % 30011).ToArray(),
    };

    /// <summary>Runs one call per input on its own thread, all released at once.</summary>
    private static async Task<T[]> Together<TInput, T>(IReadOnlyList<TInput> inputs, Func<TInput, Task<T>> call)
    {
        using var start = new Barrier(inputs.Count);
        return await Task.WhenAll(inputs.Select(input => Task.Run(async () =>
        {
            start.SignalAndWait();
            return await call(input);
        })));
    }

    private static async IAsyncEnumerable<T> Stream<T>(IEnumerable<T> items)
    {
        foreach (var item in items)
        {
            yield return item;
        }

        await Task.CompletedTask;
    }
}
