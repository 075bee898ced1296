namespace BlockDb.Backup.Cli;

/// <summary>The settings every command takes: where configuration comes from and how much is logged.</summary>
/// <param name="ConfigFile">An extra JSON file (<c>--config</c>), layered over appsettings.json.</param>
/// <param name="Provider">The provider (<c>--provider</c>), overriding every other layer.</param>
/// <param name="Database">The database file (<c>--db</c>), overriding every other layer.</param>
/// <param name="Verbose">Log at Information level instead of Warning.</param>
/// <param name="ConfigurationArgs">The <c>--BlockDb:Key=Value</c> arguments.</param>
internal sealed record CommonSettings(string? ConfigFile, string? Provider, string? Database, bool Verbose, IReadOnlyList<string> ConfigurationArgs);
