namespace BlockDb.SystemData;

/// <summary>
/// Keeps SQLite's error log (<see href="https://www.sqlite.org/errlog.html"/>) the application's. System.Data.SQLite
/// installs its own process-wide <c>SQLITE_CONFIG_LOG</c> callback when its first connection is created (on SQLite
/// 3.42 and later even after SQLite was initialized), which would silently replace a callback the application or
/// another provider installed on the same <c>e_sqlite3</c> library. Its documented <c>No_SQLiteLog</c> setting (an
/// environment variable) stops that; the driver sets it before its first connection unless the application chose
/// itself (<c>No_SQLiteLog</c> or <c>Initialize_SQLiteLog</c> already set).
/// </summary>
internal static class SystemDataLog
{
    private static readonly Lazy<bool> Kept = new(static () =>
    {
        if (Environment.GetEnvironmentVariable("No_SQLiteLog") is null && Environment.GetEnvironmentVariable("Initialize_SQLiteLog") is null)
        {
            Environment.SetEnvironmentVariable("No_SQLiteLog", "1");
        }

        return true;
    });

    /// <summary>Called before System.Data.SQLite creates its first connection in this process.</summary>
    public static void KeepApplicationLog() => _ = Kept.Value;
}
