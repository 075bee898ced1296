using BlockDb.Opening;

namespace BlockDb.Tests.PostgreSql;

/// <summary>
/// What the PostgreSQL shared session's gathered writes [S4] cost the server, counted by the server (not timed): each
/// batch is one transaction, and a lane that keeps working keeps its connection, so Npgsql's pool does not reset it
/// (a reset is a transaction of its own: <c>RESET ALL</c>, <c>DISCARD</c>, <c>pg_advisory_unlock_all()</c>...) between
/// batches. Each test runs in a database of its own and reads <c>pg_stat_database</c> once every connection has ended.
/// </summary>
public sealed class PostgreSqlGatheredServerWorkTests
{
    /// <summary>Transactions besides the batches: at most one pool reset per lane, for the connection it takes first.</summary>
    private const int Lanes = 4;

    /// <summary>
    /// Pool resets a loaded machine may add: a lane that waits longer than <c>PgGatheredWrites.IdleHold</c> (1 s) for its
    /// turn gives its connection back and pays one reset when it takes one again (CI saw 66 commits for 60 writes at
    /// load 10). At most one in four batches here; a reset per batch, the regression these tests guard, adds one per batch.
    /// </summary>
    private static long IdleResets(long batches) => batches / 4;

    [PostgresFact]
    public async Task A_lone_caller_costs_the_server_one_transaction_per_gathered_write()
    {
        const int Writes = 60;
        var batches = 0L;
        var commits = await ServerCommitsAsync(async db =>
        {
            await using var shared = db.OpenSharedSession();
            for (var i = 0; i < Writes; i++)
            {
                Assert.True((await shared.SelectXorInsertAsync(TestData.Block(i, 4096))).Created);
            }

            batches = shared.CommittedBatches;
        });

        Assert.Equal(Writes, batches);
        Assert.InRange(commits, Writes, Writes + Lanes + IdleResets(Writes));
    }

    [PostgresFact]
    public async Task Eight_concurrent_callers_adding_files_cost_the_server_one_transaction_per_batch()
    {
        const int Callers = 8;
        const int Files = 25;
        var batches = 0L;
        var commits = await ServerCommitsAsync(async db =>
        {
            await using var shared = db.OpenSharedSession();
            await Task.WhenAll(Enumerable.Range(0, Callers).Select(c => Task.Run(async () =>
            {
                for (var f = 0; f < Files; f++)
                {
                    var blocks = Enumerable.Range(0, 1 + (f % 4)).Select(b => TestData.Block((((c * Files) + f) * 4) + b, 4096)).ToArray();
                    await shared.AddBlocksetAsync(blocks, new SelectXorInsertResult[blocks.Length], TestData.Bytes((c * Files) + f));
                }
            })));

            batches = shared.CommittedBatches;
            await using var session = await db.OpenSessionAsync();
            Assert.Equal(Callers * Files, (await session.GetCountsAsync()).Blocksets);
        });

        // The check's session adds its read and its connection's pool reset.
        Assert.InRange(commits, batches, batches + Lanes + 2 + IdleResets(batches));
    }

    /// <summary>The transactions the server committed in a new database for <paramref name="work"/>, less those of opening and closing a database there with no work.</summary>
    private static async Task<long> ServerCommitsAsync(Func<IBlockDatabase, Task> work) =>
        await CommitsInNewDatabaseAsync(work) - await CommitsInNewDatabaseAsync(_ => Task.CompletedTask);

    private static async Task<long> CommitsInNewDatabaseAsync(Func<IBlockDatabase, Task> work)
    {
        var connectionString = PostgreSqlServer.CreateDatabase(out var database);
        try
        {
            await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = connectionString }))
            {
                await work(db);
            }

            return (await PostgreSqlServer.StatisticsAfterDisconnectAsync(database)).Commits;
        }
        finally
        {
            PostgreSqlServer.DropDatabase(database);
        }
    }
}
