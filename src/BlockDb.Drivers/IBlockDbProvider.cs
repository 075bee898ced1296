namespace BlockDb.Drivers;

/// <summary>
/// A provider that implements the whole block index itself, on a database of its own (a database server), rather
/// than a SQLite driver under BlockDb's SQLite engine (<see cref="ISqliteDriver"/>). BlockDb picks it by
/// <see cref="Name"/> when <see cref="BlockDbOptions.Provider"/> names it.
/// </summary>
/// <remarks>Implementations are thread-safe and hold no state of their own per database.</remarks>
public interface IBlockDbProvider
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
