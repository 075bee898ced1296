using Npgsql;

namespace BlockDb.Tests.Support;

/// <summary>
/// The PostgreSQL server the tests use: <c>BLOCKDB_TEST_POSTGRES</c> (an Npgsql connection string, as
/// <c>eval "$(eng/postgres.sh start)"</c> sets it) when given, else a throwaway server the tests start themselves
/// (<see cref="ThrowawayPostgres"/>: once per run, whatever runs in parallel, stopped at the end), so
/// <c>dotnet test BlockDb.sln</c> alone runs them. Each test gets a schema of its own (<see cref="CreateSchema"/>), so
/// tests run side by side on one database. When no server can be had the PostgreSQL tests skip on a developer machine
/// and fail in CI (<c>CI</c> set), so a CI run cannot pass without exercising them.
/// </summary>
internal static class PostgreSqlServer
{
    public const string Variable = "BLOCKDB_TEST_POSTGRES";

    private static readonly Lazy<(string? ConnectionString, string? Problem)> Server = new(Find);

    /// <summary>The server's connection string (starting the throwaway server on first use when none is given), or null when none can be had.</summary>
    public static string? ConnectionString => Server.Value.ConnectionString;

    /// <summary>The <c>eng/postgres.sh</c> that runs the server, for the test that restarts it (null: a server given from outside, not restartable here).</summary>
    public static string? Script => Server.Value.ConnectionString is null ? null : Environment.GetEnvironmentVariable("BLOCKDB_TEST_POSTGRES_SCRIPT");

    private static string? Problem => Server.Value.Problem;

    /// <summary>Whether tests must run against the server even when it is unreachable (in CI: they then fail).</summary>
    public static bool Required => Environment.GetEnvironmentVariable("CI") is { Length: > 0 } ci && ci != "false";

    /// <summary>Whether the PostgreSQL rows of the provider matrix run: the server answers, or CI requires them.</summary>
    public static bool Included => Required || Problem is null;

    /// <summary>Why PostgreSQL tests skip (null: they run).</summary>
    public static string? SkipReason => Included
        ? null
        : $"No PostgreSQL server for the tests ({Problem}). Give one with {Variable} (eval \"$(eng/postgres.sh start)\" sets it), or let the tests start eng/postgres.sh (it needs root or PostgreSQL installed).";

    /// <summary>Creates an empty schema and returns a connection string whose search_path points at it.</summary>
    public static string CreateSchema(out string schema)
    {
        schema = "t_" + Guid.NewGuid().ToString("N");
        var admin = ConnectionString ?? throw new InvalidOperationException($"No PostgreSQL server for the tests: {Problem}");
        using (var connection = new NpgsqlConnection(admin))
        {
            connection.Open();
            using var create = new NpgsqlCommand($"CREATE SCHEMA {schema}", connection); // a generated name, not input
            create.ExecuteNonQuery();
        }

        return new NpgsqlConnectionStringBuilder(admin) { SearchPath = schema }.ConnectionString;
    }

    /// <summary>Drops a schema made by <see cref="CreateSchema"/>, with everything in it.</summary>
    public static void DropSchema(string schema)
    {
        NpgsqlConnection.ClearAllPools();
        using var connection = new NpgsqlConnection(ConnectionString);
        connection.Open();
        using var drop = new NpgsqlCommand($"DROP SCHEMA IF EXISTS {schema} CASCADE", connection);
        drop.ExecuteNonQuery();
    }

    /// <summary>
    /// Creates an empty database of its own on the server and returns its connection string: for a test that reads the
    /// server's per-database counters (<c>pg_stat_database</c>), which the tests sharing one database would disturb.
    /// </summary>
    public static string CreateDatabase(out string database)
    {
        database = "t_" + Guid.NewGuid().ToString("N");
        var admin = ConnectionString ?? throw new InvalidOperationException($"No PostgreSQL server for the tests: {Problem}");
        Execute(admin, $"CREATE DATABASE {database}"); // a generated name, not input
        return new NpgsqlConnectionStringBuilder(admin) { Database = database }.ConnectionString;
    }

    /// <summary>Drops a database made by <see cref="CreateDatabase"/>, ending any connection still on it.</summary>
    public static void DropDatabase(string database)
    {
        NpgsqlConnection.ClearAllPools();
        Execute(ConnectionString!, $"DROP DATABASE IF EXISTS {database} WITH (FORCE)");
    }

    /// <summary>The deadlocks the server detected in <paramref name="database"/> (<c>pg_stat_database.deadlocks</c>), once every connection to it has ended.</summary>
    public static async Task<long> DeadlocksAfterDisconnectAsync(string database) =>
        (await StatisticsAfterDisconnectAsync(database)).Deadlocks;

    /// <summary>
    /// The server's counters of <paramref name="database"/> (<c>pg_stat_database</c>: deadlocks detected, transactions
    /// committed), once every connection to it has ended: a backend adds its counts to the shared statistics at the latest
    /// when it exits, before it leaves <c>pg_stat_activity</c> (<see href="https://www.postgresql.org/docs/current/monitoring-stats.html"/>).
    /// </summary>
    public static async Task<(long Deadlocks, long Commits)> StatisticsAfterDisconnectAsync(string database)
    {
        await using var connection = new NpgsqlConnection(ConnectionString);
        await connection.OpenAsync();
        for (var wait = 0; ; wait++)
        {
            await using var open = new NpgsqlCommand("SELECT count(*) FROM pg_stat_activity WHERE datname = $1", connection) { Parameters = { new() { Value = database } } };
            if ((long)(await open.ExecuteScalarAsync())! == 0)
            {
                break;
            }

            if (wait == 600)
            {
                throw new TimeoutException($"Connections to {database} still open after a minute.");
            }

            await Task.Delay(100);
        }

        await using var batch = new NpgsqlBatch(connection)
        {
            BatchCommands = { new("SELECT pg_stat_clear_snapshot()"), new("SELECT deadlocks, xact_commit FROM pg_stat_database WHERE datname = $1") { Parameters = { new() { Value = database } } } },
        };
        await using var reader = await batch.ExecuteReaderAsync();
        await reader.NextResultAsync();
        await reader.ReadAsync();
        return (reader.GetInt64(0), reader.GetInt64(1));
    }

    /// <summary>Runs SQL as the server's administrator (faults: terminating backends, foreign tables).</summary>
    public static void Execute(string connectionString, string sql)
    {
        using var connection = new NpgsqlConnection(connectionString);
        connection.Open();
        using var command = new NpgsqlCommand(sql, connection);
        command.ExecuteNonQuery();
    }

    private static (string? ConnectionString, string? Problem) Find()
    {
        if (Environment.GetEnvironmentVariable(Variable) is not { Length: > 0 } given)
        {
            return ThrowawayPostgres.Acquire();
        }

        return (given, Probe(given));
    }

    private static string? Probe(string connectionString)
    {
        try
        {
            using var connection = new NpgsqlConnection(new NpgsqlConnectionStringBuilder(connectionString) { Timeout = 3 }.ConnectionString);
            connection.Open();
            return null;
        }
        catch (Exception e) when (e is NpgsqlException or ArgumentException or TimeoutException)
        {
            return $"{Variable} is set but the server does not answer: {e.Message}";
        }
    }
}
