using BlockDb.Opening;
using Microsoft.Extensions.Logging;
using Npgsql;

namespace BlockDb.PostgreSql;

/// <summary>
/// The <c>PostgreSql</c> provider: BlockDb's index on a PostgreSQL server through Npgsql. Selected by configuration
/// (<c>BlockDb:Provider = PostgreSql</c> with <c>BlockDb:ConnectionString</c>; the provider catalog finds this type by
/// name) or by <c>services.AddBlockDb(...).AddPostgreSqlProvider()</c>. It implements BlockDb.Core's internal engine
/// contract, so it runs only on the BlockDb.Core of its own version (checked by Core before it loads this type).
/// Connections come from an <see cref="NpgsqlDataSource"/> (pooled, multiplexing off): one the provider builds from the
/// connection string, or, when no connection string is set, the one the application registered with dependency injection.
/// </summary>
internal sealed class PostgreSqlProvider : IEngineProvider
{
    private PostgreSqlProvider()
    {
    }

    /// <summary>The provider (stateless and thread-safe).</summary>
    public static PostgreSqlProvider Instance { get; } = new();

    /// <summary>The provider name used in configuration: <c>PostgreSql</c>.</summary>
    public string Name => "PostgreSql";

    /// <summary>
    /// Refuses the settings the provider cannot honour, naming them: <see cref="BlockDbOptions.DataSource"/>, any
    /// pragma, a layout other than <see cref="BlockLayout.BlobHash"/>, the key map's memory limit, and the group-commit
    /// batch settings; and checks the connection string's syntax.
    /// </summary>
    /// <param name="options">The frozen options.</param>
    /// <exception cref="BlockDbConfigurationException">A setting is refused; <see cref="BlockDbConfigurationException.Setting"/> names it.</exception>
    public void Validate(BlockDbOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        PgOptionsCheck.Validate(options);
    }

    /// <summary>
    /// Connects, checks the schema (creating it in an empty database unless read-only) and returns the open index.
    /// Blocks the calling thread while it talks to the server.
    /// </summary>
    /// <param name="context">The frozen options, the logger factory and the application's services.</param>
    /// <returns>The open database.</returns>
    /// <exception cref="BlockDbConfigurationException">No connection string is set and no <see cref="NpgsqlDataSource"/> is registered.</exception>
    /// <exception cref="BlockDbFormatException">The database holds another application's tables, a newer BlockDb schema, or (read-only) no index.</exception>
    /// <exception cref="BlockDbException">The server could not be reached or refused the login; <see cref="BlockDbException.SqlState"/> holds its SQLSTATE (08006 when the connection itself failed).</exception>
    public IBlockDatabase Open(BlockDbProviderContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        var (dataSource, owned) = DataSourceFor(context);
        var server = Describe(dataSource);
        var pg = new PgContext(dataSource, server, context.Options) { Logger = context.LoggerFactory.CreateLogger<PostgreSqlDatabase>() };
        return PostgreSqlDatabase.OpenAsync(pg, owned, CancellationToken.None).GetAwaiter().GetResult();
    }

    private static (NpgsqlDataSource DataSource, bool Owned) DataSourceFor(BlockDbProviderContext context)
    {
        var options = context.Options;
        if (options.ConnectionString is null)
        {
            return context.Services?.GetService(typeof(NpgsqlDataSource)) is NpgsqlDataSource registered
                ? (registered, false)
                : throw new BlockDbConfigurationException(
                    $"{BlockDbOptions.SectionName}:ConnectionString",
                    "BlockDb:ConnectionString is not set and no NpgsqlDataSource is registered; set it to the server's connection string, for example Host=db.example;Database=backup;Username=blockdb (https://www.npgsql.org/doc/connection-string-parameters.html).");
        }

        var builder = new NpgsqlDataSourceBuilder(options.ConnectionString);
        var settings = builder.ConnectionStringBuilder;
        if (settings.MaxAutoPrepare == 0)
        {
            // Prepare the hot statements on each physical connection after their second use (Npgsql's automatic preparation).
            settings.MaxAutoPrepare = 32;
            settings.AutoPrepareMinUsages = 2;
        }

        if (options.ReadOnly)
        {
            // Defence in depth behind BlockDb's own refusal: the server refuses writes too (SQLSTATE 25006).
            settings.Options = $"{settings.Options} -c default_transaction_read_only=on".Trim();
        }

        builder.UseLoggerFactory(context.LoggerFactory);
        return (builder.Build(), true);
    }

    private static string Describe(NpgsqlDataSource dataSource)
    {
        var settings = new NpgsqlConnectionStringBuilder(dataSource.ConnectionString);
        return $"{settings.Host}:{settings.Port}/{settings.Database ?? settings.Username}";
    }
}
