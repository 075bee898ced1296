using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb;

/// <summary>
/// The providers BlockDb ships, by the name used in configuration (<c>BlockDb:Provider</c>). Each lives in its own
/// package; a provider whose package the application references is found by name without registering it, and one
/// it does not reference fails with <see cref="BlockDbConfigurationException"/> naming the package to add.
/// </summary>
public static class BlockDbProviders
{
    /// <summary>The Microsoft.Data.Sqlite provider (package <c>BlockDb.MicrosoftData</c>).</summary>
    public const string MicrosoftData = "MicrosoftData";

    /// <summary>The System.Data.SQLite provider (package <c>BlockDb.SystemData</c>, on the System.Data.SQLite package).</summary>
    public const string SystemData = "SystemData";

    /// <summary>The direct P/Invoke provider into <c>e_sqlite3</c> (package <c>BlockDb.PInvoke</c>).</summary>
    public const string PInvoke = "PInvoke";

    /// <summary>The PostgreSQL provider, on Npgsql (package <c>BlockDb.PostgreSql</c>): the index on a database server, set by <see cref="BlockDbOptions.ConnectionString"/>.</summary>
    public const string PostgreSql = "PostgreSql";

    /// <summary>The provider used when <see cref="BlockDbOptions.Provider"/> is not set and no provider, or more than one, was registered: <c>MicrosoftData</c>.</summary>
    public const string Default = MicrosoftData;

    /// <summary>The SQLite providers BlockDb ships, in the order the documentation lists them: MicrosoftData, SystemData, PInvoke.</summary>
    public static IReadOnlyList<string> Names => ProviderCatalog.SqliteNames;

    /// <summary>Gets a SQLite provider's driver by name, case-insensitively, loading its package's assembly.</summary>
    /// <param name="name">The provider name, for example <c>PInvoke</c>.</param>
    /// <returns>The driver.</returns>
    /// <exception cref="BlockDbConfigurationException">No SQLite provider has that name (the message lists the valid names), its package is not referenced by the application, or it failed to load (the message says what to install).</exception>
    public static ISqliteDriver Get(string? name) => ProviderCatalog.Find(name, [], []) switch
    {
        SqliteProvider sqlite => sqlite.Driver,
        var other => throw new BlockDbConfigurationException(
            $"{BlockDbOptions.SectionName}:Provider",
            $"The BlockDb provider '{other.Name}' is not a SQLite provider; valid SQLite providers: {string.Join(", ", Names)}."),
    };
}
