using Npgsql;

namespace BlockDb.Tests.Disposal;

/// <summary>
/// The one dispose order every engine's database shares, PostgreSQL included: a running check is cancelled and waited
/// for before the dispose returns, and a session whose final commit fails is reported by the database's dispose.
/// </summary>
public sealed class DatabaseDisposeOrderTests : ConformanceTestBase
{
    private static readonly TimeSpan Hang = TimeSpan.FromSeconds(60);

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Disposing_the_database_ends_a_check_that_waits_for_a_lock_before_it_returns(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var db = Open(o =>
        {
            BusyTimeout(o, 2000);
            if (!IsServer)
            {
                o.Pragmas.JournalMode = JournalMode.Delete; // a reader waits for an exclusive lock only outside WAL
            }
        });
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 10));
        }

        await using var locker = await LockAgainstReadersAsync();
        var check = db.CheckAsync().AsTask();
        await WaitUntilBlockedAsync(check);

        await db.DisposeAsync();
        var completedAtDispose = check.IsCompleted;
        await locker.DisposeAsync();
        var outcome = await Record.ExceptionAsync(() => check.WaitAsync(Hang));

        Assert.True(completedAtDispose, $"DisposeAsync returned while CheckAsync was still running (it later ended with {outcome?.GetType().Name ?? "a result"}).");
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Disposing_the_database_reports_a_session_whose_final_commit_failed_and_still_closes(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var name = "blockdb-victim-" + Guid.NewGuid().ToString("N");
        var db = BlockDatabase.Open(Options(o =>
        {
            o.Batching.CommitEvery = 0;
            o.Batching.OnDispose = DisposeBehavior.Commit;
            BusyTimeout(o, 200);
            if (IsServer)
            {
                o.ConnectionString = new NpgsqlConnectionStringBuilder(ConnectionString) { ApplicationName = name }.ConnectionString;
            }
            else
            {
                o.Pragmas.JournalMode = JournalMode.Delete; // a COMMIT waits for readers' shared locks only outside WAL
            }
        }));
        var session = await db.OpenSessionAsync();
        for (var i = 0; i < 5; i++)
        {
            await session.SelectXorInsertAsync(TestData.Block(i, 10));
        }

        Assert.Equal(5, session.PendingWrites);
        await using (await BreakTheCommitAsync(name))
        {
            // The session is left open: the database's dispose ends its batch, whose COMMIT fails. The owner must learn
            // that those writes are not in the index (an AggregateException of the failures), on every engine (D4).
            var e = await Assert.ThrowsAsync<AggregateException>(async () => await db.DisposeAsync());
            var lost = Assert.IsType<BlockDbBatchRolledBackException>(Assert.Single(e.InnerExceptions));
            Assert.Equal(5, lost.LostWrites);
            await Assert.ThrowsAsync<ObjectDisposedException>(async () => await session.GetCountsAsync());
        }

        await using var reopened = Open();
        await using var reader = await reopened.OpenSessionAsync();
        Assert.Equal(0, (await reader.GetCountsAsync()).Blocks);
    }

    /// <summary>Holds a lock no reader passes: SQLite's EXCLUSIVE lock on a rollback-journal file, or PostgreSQL's ACCESS EXCLUSIVE on "Block".</summary>
    private async Task<IAsyncDisposable> LockAgainstReadersAsync()
    {
        if (IsServer)
        {
            var connection = new NpgsqlConnection(ConnectionString);
            await connection.OpenAsync();
            await Execute(connection, """BEGIN; LOCK TABLE "Block" IN ACCESS EXCLUSIVE MODE""");
            return connection;
        }

        var raw = new RawSql(DbPath);
        raw.Execute("BEGIN EXCLUSIVE");
        return new Releasing(raw);
    }

    /// <summary>Makes the next COMMIT fail: SQLite, a reader's shared lock held past the busy timeout; PostgreSQL, the session's connection terminated.</summary>
    private async Task<IAsyncDisposable> BreakTheCommitAsync(string applicationName)
    {
        if (IsServer)
        {
            PostgreSqlServer.Execute(PostgreSqlServer.ConnectionString!, $"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{applicationName}'");
            return new Releasing(null);
        }

        var raw = new RawSql(DbPath);
        raw.Execute("BEGIN");
        raw.Scalar("""SELECT COUNT(*) FROM "Block" """);
        await Task.CompletedTask;
        return new Releasing(raw);
    }

    /// <summary>Waits until the check waits for the lock (PostgreSQL: a lock not granted); SQLite shows no such state, so a short wait stands in.</summary>
    private async Task WaitUntilBlockedAsync(Task check)
    {
        if (!IsServer)
        {
            await Task.Delay(200);
            Assert.False(check.IsCompleted, "The check ended before the dispose: the lock did not hold it.");
            return;
        }

        var deadline = DateTime.UtcNow + Hang;
        await using var watcher = new NpgsqlConnection(ConnectionString);
        await watcher.OpenAsync();
        await using var waiting = new NpgsqlCommand(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE NOT l.granted AND c.relnamespace = current_schema()::regnamespace",
            watcher);
        while ((long)(await waiting.ExecuteScalarAsync())! == 0)
        {
            Assert.False(check.IsCompleted, "The check ended before the dispose: the lock did not hold it.");
            Assert.True(DateTime.UtcNow < deadline, "The check never waited for the lock.");
            await Task.Delay(20);
        }
    }

    private static async Task Execute(NpgsqlConnection connection, string sql)
    {
        await using var command = new NpgsqlCommand(sql, connection);
        await command.ExecuteNonQueryAsync();
    }

    private sealed class Releasing(RawSql? raw) : IAsyncDisposable
    {
        public ValueTask DisposeAsync()
        {
            raw?.Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
