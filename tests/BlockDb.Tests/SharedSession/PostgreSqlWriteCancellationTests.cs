using BlockDb.PostgreSql;
using BlockDb.PostgreSql.Engine;
using Npgsql;

namespace BlockDb.Tests.SharedSession;

/// <summary>
/// How the PostgreSQL shared session's pooled sessions run a call (<see cref="PgConnection"/> per call, the one place
/// they do): a write's token is
/// honoured until its statements are sent and never after, so a call that throws <see cref="OperationCanceledException"/>
/// sent nothing and one whose statements ran returns their committed result; a read stays cancellable on the server.
/// (A server schema of its own per test, from <see cref="ConformanceTestBase"/>.)
/// </summary>
public sealed class PostgreSqlWriteCancellationTests : ConformanceTestBase
{
    [PostgresFact]
    public Task A_write_whose_token_fires_after_its_statement_committed_returns_its_result() => WriteCancelledAfterCommitAsync(perCall: true);

    [PostgresFact]
    public Task A_session_autocommit_write_whose_token_fires_after_its_statement_committed_returns_its_result() => WriteCancelledAfterCommitAsync(perCall: false);

    private async Task WriteCancelledAfterCommitAsync(bool perCall)
    {
        PostgreSqlServer.Execute(ConnectionString, """CREATE TABLE "Written" ("V" integer)""");
        await using var dataSource = NpgsqlDataSource.Create(ConnectionString);
        using var cts = new CancellationTokenSource();
        var rows = await PerCall(dataSource, perCall).RunAsync("test", async (connection, _, token) =>
        {
            await using (var insert = new NpgsqlCommand("""INSERT INTO "Written" VALUES (1)""", connection))
            {
                await insert.ExecuteNonQueryAsync(token); // autocommit: in the table from here on
            }

            // The caller gives up while the call reads its results: Npgsql throws at once for a cancelled token.
            await cts.CancelAsync();
            await using var count = new NpgsqlCommand("""SELECT count(*) FROM "Written" """, connection);
            return (long)(await count.ExecuteScalarAsync(token))!;
        }, write: true, retryable: false, cts.Token);

        Assert.Equal(1, rows);
    }

    [PostgresFact]
    public async Task A_write_cancelled_before_it_is_sent_sends_nothing()
    {
        PostgreSqlServer.Execute(ConnectionString, """CREATE TABLE "Written" ("V" integer)""");
        await using var dataSource = NpgsqlDataSource.Create(ConnectionString);
        using var cts = new CancellationTokenSource();
        await cts.CancelAsync();
        var sent = false;
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await PerCall(dataSource).RunAsync("test", (connection, _, token) =>
        {
            sent = true;
            return Task.FromResult(0);
        }, write: true, retryable: false, cts.Token));
        Assert.False(sent);
    }

    [PostgresFact]
    public async Task A_read_is_cancelled_on_the_server()
    {
        await using var dataSource = NpgsqlDataSource.Create(ConnectionString);
        using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));
        var started = DateTime.UtcNow;
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await PerCall(dataSource).RunAsync("test", async (connection, _, token) =>
        {
            await using var sleep = new NpgsqlCommand("SELECT pg_sleep(30)", connection);
            return await sleep.ExecuteScalarAsync(token);
        }, write: false, retryable: true, cts.Token));
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(15), "The read was not cancelled on the server.");
    }

    /// <summary>
    /// A connection in autocommit (<c>CommitEvery</c> 1): as the shared session's pooled sessions have it (a pooled
    /// connection per call), or as a session's own with <paramref name="perCall"/> false.
    /// </summary>
    private static PgConnection PerCall(NpgsqlDataSource dataSource, bool perCall = true)
    {
        var batching = new BatchingOptions { CommitEvery = 1, CommitAfterMilliseconds = null };
        var context = new PgContext(dataSource, "test", new BlockDbOptions { Batching = batching });
        return new PgConnection(context, null, new PgTransaction(batching), perCall);
    }
}
