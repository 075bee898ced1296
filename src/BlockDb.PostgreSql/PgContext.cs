using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Npgsql;

namespace BlockDb.PostgreSql;

/// <summary>What every session and shared session of one database needs: the data source, the server's name for messages, and the frozen options.</summary>
/// <param name="DataSource">The pooled data source connections come from.</param>
/// <param name="Server">Host, port and database, for messages (never a password).</param>
/// <param name="Options">The frozen options.</param>
internal sealed record PgContext(NpgsqlDataSource DataSource, string Server, BlockDbOptions Options)
{
    /// <summary>The provider's name in metrics (the configured name, else <c>PostgreSql</c>).</summary>
    public string ProviderName { get; } = Options.Provider ?? "PostgreSql";

    /// <summary>The database's logger (from the application's <c>ILoggerFactory</c>): the sessions' events (Collected) go there.</summary>
    public ILogger Logger { get; init; } = NullLogger.Instance;

    /// <summary>The error for a write on a read-only database (SQLSTATE 25006), before the server is reached.</summary>
    public void RequireWritable(string operation)
    {
        if (Options.ReadOnly)
        {
            throw new BlockDbReadOnlyException(operation, Server, BlockDbReadOnlyException.ReadOnlySqlState);
        }
    }

}
