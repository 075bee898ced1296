namespace BlockDb.Drivers;

/// <summary>How a driver opens a database file.</summary>
/// <param name="Path">The database file path (absolute or relative to the working folder).</param>
/// <param name="Mode">Whether the file may be created and whether it is opened for writing.</param>
/// <param name="BusyTimeoutMilliseconds">The <c>busy_timeout</c> the engine will set, in milliseconds, for providers that also retry <c>SQLITE_BUSY</c> on their own (Microsoft.Data.Sqlite's command timeout).</param>
public sealed record SqliteOpenOptions(string Path, SqliteOpenMode Mode, int BusyTimeoutMilliseconds = 0);
