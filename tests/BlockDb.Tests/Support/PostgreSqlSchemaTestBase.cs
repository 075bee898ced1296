using BlockDb.Opening;

namespace BlockDb.Tests.Support;

/// <summary>
/// A PostgreSQL test class's own schema on the test server, created on first use and dropped after the class's test,
/// and <see cref="Open"/> onto it.
/// </summary>
public abstract class PostgreSqlSchemaTestBase : IDisposable
{
    private string? _schema;
    private string? _connectionString;

    /// <summary>The connection string of this test's own schema (created on first use).</summary>
    protected string ConnectionString => _connectionString ??= PostgreSqlServer.CreateSchema(out _schema);

    public void Dispose()
    {
        if (_schema is not null)
        {
            PostgreSqlServer.DropSchema(_schema);
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>A PostgreSQL database on this test's schema (or <paramref name="connectionString"/>), after <paramref name="configure"/>.</summary>
    protected IBlockDatabase Open(Action<BlockDbOptions>? configure = null, string? connectionString = null)
    {
        var options = new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = connectionString ?? ConnectionString };
        configure?.Invoke(options);
        return BlockDatabase.Open(options);
    }
}
