using BlockDb;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers BlockDb in a service collection, in the style of Npgsql's <c>AddNpgsqlDataSource</c>.</summary>
public static class BlockDbServiceCollectionExtensions
{
    /// <summary>
    /// Binds and validates <see cref="BlockDbOptions"/> from the <c>BlockDb</c> configuration section now (so bad
    /// settings fail at start), and registers <see cref="BlockDatabase"/> and <see cref="IBlockDatabase"/> as one
    /// singleton, opened on first use with the configured provider and disposed with the container.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configuration">The configuration root, or its <c>BlockDb</c> section.</param>
    /// <returns>The same service collection.</returns>
    /// <exception cref="BlockDbConfigurationException">A setting is unknown or invalid; the message lists the allowed values.</exception>
    public static IServiceCollection AddBlockDb(this IServiceCollection services, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(services);
        return services.AddBlockDb(BlockDbConfiguration.Bind(configuration));
    }

    /// <summary>Registers BlockDb with options built in code (validated now).</summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configure">Sets the options.</param>
    /// <returns>The same service collection.</returns>
    /// <exception cref="BlockDbConfigurationException">A setting is invalid.</exception>
    public static IServiceCollection AddBlockDb(this IServiceCollection services, Action<BlockDbOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(configure);
        var options = new BlockDbOptions();
        configure(options);
        options.Validate();
        BlockDbProviders.Get(options.Provider);
        return services.AddBlockDb(options);
    }

    private static IServiceCollection AddBlockDb(this IServiceCollection services, BlockDbOptions options)
    {
        services.TryAddSingleton(options);
        services.TryAddSingleton(sp => BlockDatabase.Open(sp.GetRequiredService<BlockDbOptions>(), sp.GetService<ILoggerFactory>()));
        services.TryAddSingleton<IBlockDatabase>(sp => sp.GetRequiredService<BlockDatabase>());
        return services;
    }
}
