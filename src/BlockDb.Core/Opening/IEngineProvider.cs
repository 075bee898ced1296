namespace BlockDb.Opening;

/// <summary>
/// An engine BlockDb opens a database on: <see cref="SqliteProvider"/> (BlockDb's SQLite engine over an
/// <see cref="Drivers.ISqliteDriver"/>) or BlockDb.PostgreSql's provider, which implements the whole index on a
/// server. Internal: BlockDb.PostgreSql reaches it through <c>InternalsVisibleTo</c> and must be the same version as
/// BlockDb.Core (<see cref="PackageVersions"/>). <see cref="ProviderCatalog"/> picks one by <see cref="Name"/>.
/// </summary>
/// <remarks>Implementations are thread-safe and hold no state of their own per database.</remarks>
internal interface IEngineProvider
{
    /// <summary>The provider name used in configuration (<c>BlockDb:Provider</c>), compared case-insensitively.</summary>
    string Name { get; }

    /// <summary>
    /// Checks the settings that concern this provider and refuses those it cannot honour (a setting is applied or
    /// refused, never ignored). Called once when the database is built, after the provider-independent checks.
    /// </summary>
    /// <param name="options">The frozen options; do not change them.</param>
    /// <exception cref="BlockDbConfigurationException">A setting is invalid for this provider; the message names it and says what is allowed.</exception>
    void Validate(BlockDbOptions options);

    /// <summary>Opens the block index.</summary>
    /// <param name="context">The frozen options, the logger factory and the application's services.</param>
    /// <returns>The open database, which the caller disposes.</returns>
    /// <exception cref="BlockDbException">The database could not be opened; the exception keeps the engine's error code.</exception>
    IBlockDatabase Open(BlockDbProviderContext context);
}
