using BlockDb;
using BlockDb.Drivers;
using BlockDb.Opening;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// Registers BlockDb in a service collection, in the style of Npgsql's <c>AddNpgsqlDataSource</c>: the options bind
/// and validate now (so bad settings fail at start), are also registered as <see cref="IOptions{TOptions}"/> with
/// <c>ValidateOnStart</c>, and the database opens on first use and is disposed with the container.
/// One method, <see cref="AddBlockDb"/>, for configuration, code and keyed registrations.
/// </summary>
public static class BlockDbServiceCollectionExtensions
{
    /// <summary>
    /// Registers <see cref="IBlockDatabase"/> as a singleton opened on first use (through <see cref="BlockDatabaseBuilder"/>)
    /// and disposed with the container. The options are bound from <paramref name="configuration"/>, then
    /// <paramref name="configure"/> runs on them, and the result is validated now (a bad setting fails here, at start);
    /// they are also registered as <see cref="IOptions{TOptions}"/> with <c>ValidateOnStart</c>. Every provider of the
    /// BlockDb package is found by the name <c>BlockDb:Provider</c> gives; chain <c>.AddPInvokeProvider()</c> (or another
    /// provider's) to register one explicitly, which is then used when no provider is named.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configuration">The configuration root, its <c>BlockDb</c> section, or any section shaped like it; none when <see langword="null"/>.</param>
    /// <param name="configure">Sets options in code, after the configuration is bound; none when <see langword="null"/>.</param>
    /// <param name="serviceKey">
    /// For one of several block indexes in one application: <see cref="IBlockDatabase"/> is registered under this key
    /// (resolve it with <c>[FromKeyedServices(key)]</c> or <c>GetRequiredKeyedService</c>) and its options are the named
    /// options <c>serviceKey.ToString()</c>. When <see langword="null"/>, the database and its options are the unkeyed ones.
    /// </param>
    /// <returns>A builder to add providers with.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    /// <exception cref="BlockDbConfigurationException">A setting is unknown or invalid, or names an unknown provider; the message names the setting and lists the allowed values.</exception>
    /// <example>
    /// <code>
    /// services.AddBlockDb(configuration);                                       // the BlockDb section
    /// services.AddBlockDb(configure: o => o.DataSource = "index.db").AddPInvokeProvider();
    /// services.AddBlockDb(configuration.GetSection("Archive"), serviceKey: "archive");
    /// </code>
    /// </example>
    public static IBlockDbBuilder AddBlockDb(
        this IServiceCollection services,
        IConfiguration? configuration = null,
        Action<BlockDbOptions>? configure = null,
        object? serviceKey = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        var section = configuration is null ? null : BlockDbConfiguration.BlockDbSection(configuration);
        return services.Register(serviceKey, options =>
        {
            if (section is not null)
            {
                BlockDbConfiguration.BindInto(section, options);
            }

            configure?.Invoke(options);
        });
    }

    private static IBlockDbBuilder Register(this IServiceCollection services, object? key, Action<BlockDbOptions> configure)
    {
        // Validate now, against BlockDb's own providers and those already registered, so a bad setting fails at start.
        var eager = new BlockDbOptions();
        configure(eager);
        EagerCheck(services, eager);

        var name = key?.ToString() ?? Options.Options.DefaultName;
        services.AddOptions<BlockDbOptions>(name).Configure(configure).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<BlockDbOptions>, BlockDbOptionsValidator>());
        if (key is null)
        {
            services.TryAddSingleton(sp => sp.GetRequiredService<IOptionsMonitor<BlockDbOptions>>().Get(name));
            services.TryAddSingleton(sp => Open(sp, name));
        }
        else
        {
            services.TryAddKeyedSingleton(key, (sp, _) => Open(sp, name));
        }

        return new BlockDbBuilder(services, key);
    }

    private static void EagerCheck(IServiceCollection services, BlockDbOptions options)
    {
        options.Validate();
        var name = options.Provider?.Trim();
        var registered = services.Any(d =>
            (d.ServiceType == typeof(ISqliteDriver) || d.ServiceType == typeof(IEngineProvider))
            && d.ImplementationInstance is { } instance
            && string.Equals((instance as ISqliteDriver)?.Name ?? (instance as IEngineProvider)?.Name, name, StringComparison.OrdinalIgnoreCase));
        if (name is null || registered || ProviderCatalog.IsKnown(name))
        {
            return;
        }

        // Neither BlockDb's own nor registered yet: the catalog's error lists the valid names.
        new BlockDatabaseBuilder(options).Resolve();
    }

    private static IBlockDatabase Open(IServiceProvider services, string name)
    {
        var builder = new BlockDatabaseBuilder(services.GetRequiredService<IOptionsMonitor<BlockDbOptions>>().Get(name))
            .UseLoggerFactory(services.GetService<ILoggerFactory>())
            .UseServices(services);
        foreach (var driver in services.GetServices<ISqliteDriver>())
        {
            builder.AddRegisteredProvider(ProviderCatalog.Wrap(driver));
        }

        foreach (var provider in services.GetServices<IEngineProvider>())
        {
            builder.AddRegisteredProvider(provider);
        }

        return builder.Build();
    }

    /// <summary>
    /// Registers an engine provider (BlockDb.PostgreSql's <c>AddPostgreSqlProvider()</c>), so that <c>BlockDb:Provider</c>
    /// can name it; registering the same provider twice has no further effect.
    /// </summary>
    internal static IBlockDbBuilder AddEngineProvider(this IBlockDbBuilder builder, IEngineProvider provider)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(provider);
        builder.Services.TryAddEnumerable(ServiceDescriptor.Singleton(typeof(IEngineProvider), provider));
        return builder;
    }

    private sealed record BlockDbBuilder(IServiceCollection Services, object? ServiceKey) : IBlockDbBuilder;

    /// <summary>The provider-independent checks, for <c>ValidateOnStart</c> and every read of the options.</summary>
    private sealed class BlockDbOptionsValidator : IValidateOptions<BlockDbOptions>
    {
        public ValidateOptionsResult Validate(string? name, BlockDbOptions options)
        {
            try
            {
                options.Validate();
                return ValidateOptionsResult.Success;
            }
            catch (BlockDbConfigurationException e)
            {
                return ValidateOptionsResult.Fail(e.Message);
            }
        }
    }
}
