namespace BlockDb.Tests.SharedSession;

/// <summary>
/// The PostgreSQL shared session's pooled sessions take a connection from the application's pool only for the
/// length of a call (ARCHITECTURE.md, P3): after its calls it holds none, so the pool's connections stay free for the
/// application's own sessions.
/// </summary>
public sealed class PostgreSqlSharedConnectionTests : PostgreSqlSchemaTestBase
{
    [PostgresFact]
    public async Task A_shared_session_keeps_no_pooled_connection_between_its_calls()
    {
        // Two connections in the pool, and a short wait for one: a session that kept its connection would starve the rest.
        await using var db = Open(connectionString: ConnectionString + ";Maximum Pool Size=2;Timeout=3");
        await using var shared = db.OpenSharedSession();
        await Task.WhenAll(Enumerable.Range(0, 6).Select(i => Task.Run(async () =>
        {
            var id = (await shared.SelectXorInsertAsync(TestData.Block(i, 10))).Id;
            Assert.Equal(id, await shared.FindBlockAsync(TestData.Block(i, 10)));
        })));

        // Both connections free again: two sessions of the application each get one while the shared session is open.
        await using var first = await db.OpenSessionAsync();
        await using var second = await db.OpenSessionAsync();
        Assert.Equal(6, (await first.GetCountsAsync()).Blocks);
        Assert.NotNull(await second.FindBlockAsync(TestData.Block(5, 10)));
        Assert.Equal(6, shared.AcknowledgedWrites);
    }
}
