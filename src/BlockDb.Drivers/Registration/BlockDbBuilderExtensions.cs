using BlockDb.Drivers;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;

namespace BlockDb;

/// <summary>How a provider package registers itself with dependency injection; provider packages wrap these in their own <c>Add…Provider()</c>.</summary>
public static class BlockDbBuilderExtensions
{
    /// <summary>
    /// Registers a SQLite driver, so that <c>BlockDb:Provider</c> can name it. Registering the same driver type
    /// twice has no further effect. Drivers are shared by every BlockDb database of the service provider.
    /// </summary>
    /// <param name="builder">What <c>AddBlockDb</c> returned.</param>
    /// <param name="driver">The driver (one instance per provider; thread-safe).</param>
    /// <returns>The same builder.</returns>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    public static IBlockDbBuilder AddSqliteDriver(this IBlockDbBuilder builder, ISqliteDriver driver)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(driver);
        builder.Services.TryAddEnumerable(ServiceDescriptor.Singleton(typeof(ISqliteDriver), driver));
        return builder;
    }
}
