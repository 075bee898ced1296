using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace BlockDb.Backup.Cli;

/// <summary>
/// The service container of one command: console logging (to standard error) and BlockDb registered with
/// <c>services.AddBlockDb(configuration)</c>, which binds and validates the <c>BlockDb</c> section at once
/// (throwing <see cref="BlockDbConfigurationException"/>); the database itself opens on first use.
/// </summary>
internal sealed class AppServices : IAsyncDisposable
{
    private readonly ServiceProvider _provider;

    private AppServices(ServiceProvider provider, string dataFolder)
    {
        _provider = provider;
        DataFolder = dataFolder;
        Options = provider.GetRequiredService<BlockDbOptions>();
        LoggerFactory = provider.GetRequiredService<ILoggerFactory>();
        DatabasePath = Path.GetFullPath(Options.DataSource!);
    }

    /// <summary>The validated options.</summary>
    public BlockDbOptions Options { get; }

    /// <summary>The full path of the database file.</summary>
    public string DatabasePath { get; }

    /// <summary>The sample's own folder (<see cref="AppConfiguration.DataFolderKey"/>), full path.</summary>
    public string DataFolder { get; }

    /// <summary>The sidecar of the database (<see cref="Sidecar.FileMap.PathFor(string, bool, string)"/>); opens the database to read its layout.</summary>
    public string SidecarPath => Sidecar.FileMap.PathFor(DatabasePath, Database.Layout == BlockLayout.Duplicati, DataFolder);

    public ILoggerFactory LoggerFactory { get; }

    /// <summary>Gets the database, opening it (and creating the file) on first use.</summary>
    public IBlockDatabase Database => _provider.GetRequiredService<IBlockDatabase>();

    /// <exception cref="BlockDbConfigurationException">A BlockDb setting is unknown or invalid.</exception>
    /// <exception cref="UsageException">A configuration file is missing or not valid JSON.</exception>
    public static AppServices Create(CommonSettings settings)
    {
        var configuration = AppConfiguration.Build(settings);
        var services = new ServiceCollection();
        services.AddLogging(logging => ConfigureLogging(logging, settings.Verbose));
        services.AddBlockDb(configuration);
        var provider = services.BuildServiceProvider();
        try
        {
            return new AppServices(provider, AppConfiguration.DataFolder(configuration));
        }
        catch
        {
            provider.Dispose();
            throw;
        }
    }

    /// <summary>As <see cref="Create"/>, for a command that needs the database to exist already.</summary>
    /// <exception cref="UsageException">The database file does not exist.</exception>
    public static async Task<AppServices> CreateForExistingAsync(CommonSettings settings)
    {
        var app = Create(settings);
        if (!File.Exists(app.DatabasePath))
        {
            await app.DisposeAsync().ConfigureAwait(false);
            throw new UsageException($"The database '{app.DatabasePath}' does not exist; run 'index' first (or give --db).");
        }

        return app;
    }

    public static void ConfigureLogging(ILoggingBuilder logging, bool verbose) => logging
        .SetMinimumLevel(verbose ? LogLevel.Information : LogLevel.Warning)
        .AddConsole(console => console.LogToStandardErrorThreshold = LogLevel.Trace);

    public ValueTask DisposeAsync() => _provider.DisposeAsync();
}
