using BlockDb;
using BlockDb.PostgreSql;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers the PostgreSQL provider with BlockDb's dependency injection.</summary>
public static class PostgreSqlBlockDbBuilderExtensions
{
    /// <summary>
    /// Registers the <c>PostgreSql</c> provider, so that <c>BlockDb:Provider = PostgreSql</c> selects it
    /// (<c>services.AddBlockDb(configuration).AddPostgreSqlProvider()</c>); when it is the only provider registered and
    /// <c>BlockDb:Provider</c> is not set, it is the one used. With no <c>BlockDb:ConnectionString</c>, the database uses
    /// the <c>NpgsqlDataSource</c> registered in the container (Npgsql's <c>AddNpgsqlDataSource</c>), and leaves its disposal
    /// to the container.
    /// </summary>
    /// <param name="builder">What <c>AddBlockDb</c> returned.</param>
    /// <returns>The same builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is null.</exception>
    public static IBlockDbBuilder AddPostgreSqlProvider(this IBlockDbBuilder builder) => builder.AddEngineProvider(PostgreSqlProvider.Instance);
}
