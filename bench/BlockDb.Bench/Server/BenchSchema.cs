using Npgsql;

namespace BlockDb.Bench.Server;

/// <summary>A schema of its own on the server for one measured run, dropped afterwards (the names are generated, never input).</summary>
internal sealed class BenchSchema : IDisposable
{
    private readonly string _admin;
    private readonly string _name = "bench_" + Guid.NewGuid().ToString("N");

    public BenchSchema(string admin)
    {
        _admin = admin;
        Execute($"CREATE SCHEMA {_name}");
        ConnectionString = new NpgsqlConnectionStringBuilder(admin) { SearchPath = _name, MaxPoolSize = 200 }.ConnectionString;
    }

    public string ConnectionString { get; }

    public void Dispose()
    {
        NpgsqlConnection.ClearAllPools();
        Execute($"DROP SCHEMA {_name} CASCADE");
    }

    private void Execute(string sql)
    {
        using var connection = new NpgsqlConnection(_admin);
        connection.Open();
        using var command = new NpgsqlCommand(sql, connection);
        command.ExecuteNonQuery();
    }
}
