using BlockDb.PostgreSql.Sessions;
using Npgsql;

namespace BlockDb.Tests.SharedRepository;

/// <summary>
/// How the PostgreSQL shared repository runs a call (<see cref="PgRetry"/>, the one place it does): a write's token is
/// honoured until its statements are sent and never after, so a call that throws <see cref="OperationCanceledException"/>
/// sent nothing and one whose statements ran returns their committed result; a read stays cancellable on the server.
/// (A server schema of its own per test, from <see cref="ConformanceTestBase"/>.)
/// </summary>
public sealed class PostgreSqlWriteCancellationTests : ConformanceTestBase
{
    [PostgresFact]
    public async Task A_write_whose_token_fires_after_its_statement_committed_returns_its_result()
    {
        PostgreSqlServer.Execute(ConnectionString, """CREATE TABLE "Written" ("V" integer)""");
        await using var dataSource = NpgsqlDataSource.Create(ConnectionString);
        using var cts = new CancellationTokenSource();
        var rows = await PgRetry.RunAsync(dataSource, "test", async (connection, token) =>
        {
            await using (var insert = new NpgsqlCommand("""INSERT INTO "Written" VALUES (1)""", connection))
            {
                await insert.ExecuteNonQueryAsync(token); // autocommit: in the table from here on
            }

            // The caller gives up while the call reads its results: Npgsql throws at once for a cancelled token.
            await cts.CancelAsync();
            await using var count = new NpgsqlCommand("""SELECT count(*) FROM "Written" """, connection);
            return (long)(await count.ExecuteScalarAsync(token))!;
        }, PgAccess.Write, cts.Token);

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
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => PgRetry.RunAsync(dataSource, "test", (connection, token) =>
        {
            sent = true;
            return Task.FromResult(0);
        }, PgAccess.Write, cts.Token));
        Assert.False(sent);
    }

    [PostgresFact]
    public async Task A_read_is_cancelled_on_the_server()
    {
        await using var dataSource = NpgsqlDataSource.Create(ConnectionString);
        using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));
        var started = DateTime.UtcNow;
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => PgRetry.RunAsync(dataSource, "test", async (connection, token) =>
        {
            await using var sleep = new NpgsqlCommand("SELECT pg_sleep(30)", connection);
            return await sleep.ExecuteScalarAsync(token);
        }, PgAccess.Read, cts.Token));
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(15), "The read was not cancelled on the server.");
    }
}
