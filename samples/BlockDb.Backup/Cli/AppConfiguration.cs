using System.Text.Json;
using Microsoft.Extensions.Configuration;

namespace BlockDb.Backup.Cli;

/// <summary>
/// Builds the configuration, lowest layer first: built-in defaults, <c>appsettings.json</c> next to the
/// executable, <c>--config FILE</c>, environment variables (<c>BlockDb__Provider</c>), <c>--BlockDb:Key=Value</c>
/// arguments, then the <c>--provider</c> and <c>--db</c> options. Besides BlockDb's section, the sample reads one key of its
/// own, <see cref="DataFolderKey"/>.
/// </summary>
internal static class AppConfiguration
{
    public const string DefaultDatabase = "blockdb-backup.db";

    /// <summary>The sample's own configuration section.</summary>
    public const string SectionName = "Backup";

    /// <summary>
    /// The sample's own folder, for what it keeps about a database it does not own (a Duplicati database's sidecar,
    /// <see cref="Sidecar.FileMap"/>); default <c>blockdb-backup</c> under the user's local application data folder
    /// (<c>$XDG_DATA_HOME</c> or <c>~/.local/share</c> on Linux).
    /// </summary>
    public const string DataFolderKey = SectionName + ":DataFolder";

    /// <summary>The data folder configured (<see cref="DataFolderKey"/>), or the default, as a full path.</summary>
    public static string DataFolder(IConfiguration configuration) =>
        Path.GetFullPath(configuration[DataFolderKey] is { Length: > 0 } folder
            ? folder
            : Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.LocalApplicationData, Environment.SpecialFolderOption.DoNotVerify), "blockdb-backup"));

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
