using System.Text.Json;
using Microsoft.Extensions.Configuration;

namespace BlockDb.Backup.Cli;

/// <summary>
/// Builds the configuration, lowest layer first: built-in defaults, <c>appsettings.json</c> next to the
/// executable, <c>--config FILE</c>, environment variables (<c>BlockDb__Provider</c>), <c>--BlockDb:Key=Value</c>
/// arguments, then the <c>--provider</c> and <c>--db</c> options.
/// </summary>
internal static class AppConfiguration
{
    public const string DefaultDatabase = "blockdb-backup.db";

    public static IConfigurationRoot Build(CommonSettings settings)
    {
        var builder = new ConfigurationBuilder()
            .AddInMemoryCollection(new Dictionary<string, string?> { ["BlockDb:DataSource"] = DefaultDatabase })
            .AddJsonFile(Path.Combine(AppContext.BaseDirectory, "appsettings.json"), optional: true, reloadOnChange: false);
        if (settings.ConfigFile is { } file)
        {
            var full = Path.GetFullPath(file);
            if (!File.Exists(full))
            {
                throw new UsageException($"The configuration file '{full}' (--config) does not exist.");
            }

            builder.AddJsonFile(full, optional: false, reloadOnChange: false);
        }

        builder.AddEnvironmentVariables().AddCommandLine([.. settings.ConfigurationArgs]);
        var overrides = new Dictionary<string, string?>();
        if (settings.Provider is { } provider)
        {
            overrides["BlockDb:Provider"] = provider;
        }

        if (settings.Database is { } database)
        {
            overrides["BlockDb:DataSource"] = database;
        }

        try
        {
            return builder.AddInMemoryCollection(overrides).Build();
        }
        catch (Exception e) when (e is InvalidDataException or FormatException or JsonException)
        {
            throw new UsageException($"A configuration file could not be read: {e.Message}", e);
        }
    }
}
