namespace BlockDb.Drivers;

/// <summary>
/// A SQLite provider as BlockDb sees it: the one thing that differs between Microsoft.Data.Sqlite,
/// System.Data.SQLite and direct P/Invoke. Everything else (schema, pragmas, batching, validation,
/// select-xor-insert) is shared and lives in the <c>BlockDb</c> engine.
/// </summary>
/// <remarks>Implementations are thread-safe; the connections they open are not.</remarks>
public interface ISqliteDriver
{
    /// <summary>The provider name used in configuration, for example <c>MicrosoftData</c>.</summary>
    string Name { get; }

    /// <summary>
    /// The version of the native SQLite library this provider loads (<c>sqlite3_libversion()</c>),
    /// for example <c>3.50.4</c>. Loads the library if it is not loaded yet.
    /// </summary>
    string NativeLibraryVersion { get; }

    /// <summary>Opens a connection to a database file.</summary>
    /// <param name="options">The file path and open mode.</param>
    /// <returns>An open connection that the caller disposes.</returns>
    /// <exception cref="BlockDbException">SQLite refused to open the file; <see cref="BlockDbException.SqliteErrorCode"/> holds its result code.</exception>
    ISqliteConnection Open(SqliteOpenOptions options);
}
