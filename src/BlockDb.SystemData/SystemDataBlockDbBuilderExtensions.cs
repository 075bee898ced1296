using BlockDb;
using BlockDb.SystemData;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers the SystemData provider (System.Data.SQLite) with BlockDb's dependency injection.</summary>
public static class SystemDataBlockDbBuilderExtensions
{
    /// <summary>
    /// Registers the <c>SystemData</c> provider, so that <c>BlockDb:Provider = SystemData</c> selects it
    /// (<c>services.AddBlockDb(configuration).AddSystemDataProvider()</c>). When it is the only provider registered and
    /// <c>BlockDb:Provider</c> is not set, it is the one used.
    /// </summary>
    /// <param name="builder">What <c>AddBlockDb</c> returned.</param>
    /// <returns>The same builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is null.</exception>
    public static IBlockDbBuilder AddSystemDataProvider(this IBlockDbBuilder builder) => builder.AddSqliteDriver(SystemDataDriver.Instance);
}
