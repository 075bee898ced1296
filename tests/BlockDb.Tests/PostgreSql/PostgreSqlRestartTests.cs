using System.Diagnostics;
using BlockDb.Opening;

namespace BlockDb.Tests.PostgreSql;

/// <summary>
/// A server restart between batches (<c>eng/postgres.sh restart</c>, which <c>BLOCKDB_TEST_POSTGRES_SCRIPT</c> names).
/// In a collection of its own that xUnit runs alone, after the parallel ones: a restart would break other tests' connections.
/// </summary>
[Collection(nameof(PostgreSqlRestartTests))]
public sealed class PostgreSqlRestartTests : IDisposable
{
    private readonly string _connectionString;
    private readonly string _schema;

    public PostgreSqlRestartTests()
    {
        _connectionString = PostgreSqlServer.SkipReason is null ? PostgreSqlServer.CreateSchema(out _schema) : _schema = string.Empty;
    }

    public void Dispose()
    {
        if (_schema.Length > 0)
        {
            PostgreSqlServer.DropSchema(_schema);
        }
    }

    [PostgresFact]
    public async Task A_server_restart_between_batches_keeps_the_committed_batches_and_the_session_goes_on()
    {
        var script = PostgreSqlServer.Script;
        Assert.False(string.IsNullOrEmpty(script), "BLOCKDB_TEST_POSTGRES_SCRIPT is not set: the server was given without eng/postgres.sh (eval \"$(eng/postgres.sh start)\" sets both)");
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = _connectionString, Batching = { CommitEvery = 0 } });
        await using var session = await db.OpenSessionAsync();
        await using var shared = db.OpenSharedSession();
        var first = new List<long>();
        for (var i = 0; i < 20; i++)
        {
            first.Add((await session.SelectXorInsertAsync(TestData.Block(i, 10))).Id);
        }

        await session.CommitAsync();
        Assert.NotNull(await shared.FindBlockAsync(TestData.Block(0, 10))); // the shared session's pool holds a connection too

        Restart(script!);

        // Both reconnect on their own: nothing was pending, so the calls run again on new connections.
        Assert.Equal(new SelectXorInsertResult(first[5], false), await session.SelectXorInsertAsync(TestData.Block(5, 10)));
        for (var i = 20; i < 30; i++)
        {
            Assert.True((await session.SelectXorInsertAsync(TestData.Block(i, 10))).Created);
        }

        await session.CommitAsync();
        Assert.Equal(first[0], await shared.FindBlockAsync(TestData.Block(0, 10)));
        Assert.Equal(30, (await shared.GetCountsAsync()).Blocks);
        Assert.True((await db.CheckAsync()).IsClean);
    }

    private static void Restart(string script)
    {
        using var restart = Process.Start(new ProcessStartInfo("bash", [script, "restart"]))!;
        Assert.True(restart.WaitForExit(TimeSpan.FromMinutes(2)), "eng/postgres.sh restart did not finish");
        Assert.True(restart.ExitCode == 0, "eng/postgres.sh restart failed; see its output above");
    }
}
