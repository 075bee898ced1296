using Npgsql;

namespace BlockDb.Tests.PostgreSql;

/// <summary>
/// A many-block select-xor-insert on PostgreSQL inserts the new keys and then finds every key in a new snapshot, in one
/// implicit transaction. Garbage collection running on another connection between the two would delete a stored,
/// unreferenced block the insert found, so the find would miss it and the call fail after its new blocks were
/// inserted (B5, S4). The call takes the shared lifecycle lock and collection the exclusive one, so they never overlap:
/// the call answers every key, each with a block that exists when it returns.
/// </summary>
public sealed class PostgreSqlSpanCollectionRaceTests : PostgreSqlSchemaTestBase
{
    private const int Keys = 48;
    private const int Calls = 200;
    private const int Span = 6;

    [PostgresFact]
    public Task A_span_on_the_shared_session_answers_every_key_while_collection_deletes_unreferenced_blocks() => RaceAsync(sharedSession: true);

    [PostgresFact]
    public Task A_span_on_a_session_answers_every_key_while_collection_deletes_unreferenced_blocks() => RaceAsync(sharedSession: false);

    private async Task RaceAsync(bool sharedSession)
    {
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var collector = await db.OpenSessionAsync();
        await using var writer = sharedSession ? null : await db.OpenSessionAsync();
        await using var shared = sharedSession ? db.OpenSharedSession() : null;
        IBlockWriter target = sharedSession ? shared! : writer!;
        await target.SelectXorInsertAsync(TestData.Block(0, 10)); // creates the schema

        // Widen the window between the call's insert and its find: every INSERT into "Block" (this test's own schema)
        // ends with a 5 ms sleep, so a collection that is not held off by the lock commits inside it.
        await using (var connection = new NpgsqlConnection(ConnectionString))
        {
            await connection.OpenAsync();
            await using var command = new NpgsqlCommand(
                """
                CREATE FUNCTION test_slow_insert() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN PERFORM pg_sleep(0.005); RETURN NULL; END';
                CREATE TRIGGER test_slow_insert AFTER INSERT ON "Block" FOR EACH STATEMENT EXECUTE FUNCTION test_slow_insert();
                """,
                connection);
            await command.ExecuteNonQueryAsync();
        }

        using var stop = new CancellationTokenSource();
        var collections = 0;
        var collected = 0L;
        var collecting = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                var result = await collector.DeleteUnreferencedBlocksAsync();
                collected += result.Blocks;
                collections++;
            }
        });

        var random = new Random(25);
        try
        {
            for (var call = 0; call < Calls; call++)
            {
                var keys = Enumerable.Range(0, Span).Select(_ => TestData.Block(random.Next(Keys), 10)).DistinctBy(k => k.Hash).ToArray();
                var results = new SelectXorInsertResult[keys.Length];
                await target.SelectXorInsertManyAsync(keys, results);
                Assert.All(results, r => Assert.True(r.Id > 0, $"call {call}: a key was answered with ID {r.Id}"));
            }
        }
        finally
        {
            await stop.CancelAsync();
            await collecting;
        }

        // The race was real: collection ran beside the calls and deleted blocks they had made or found.
        Assert.True(collections > 10, $"only {collections} collections ran beside {Calls} calls");
        Assert.True(collected > 0, "no collection deleted a block: the calls never met one");
    }
}
