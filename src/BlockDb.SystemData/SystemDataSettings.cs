namespace BlockDb.SystemData;

/// <summary>
/// Two of System.Data.SQLite's process-wide settings (environment variables it reads; its documented way to configure
/// itself), set before its first connection unless the application set them itself:
/// <list type="bullet">
/// <item><c>No_SQLiteLog</c>: left to itself, it installs its own <c>SQLITE_CONFIG_LOG</c> callback when its first connection
/// is created (on SQLite 3.42 and later even after SQLite was initialized), silently replacing SQLite's error log
/// (<see href="https://www.sqlite.org/errlog.html"/>) that the application or another provider installed on the same
/// <c>e_sqlite3</c>. Not set when the application set <c>Initialize_SQLiteLog</c> (it wants that log).</item>
/// <item><c>No_PreLoadSQLite</c>: left to itself, every connection's constructor searches the application's folder for a
/// native SQLite in processor-named subfolders (the 1.0 line's <c>x64/</c>, <c>x86/</c> layout) to load by path, and
/// repeats the search while it finds none: about 0.3–3 ms a connection here, against tens of microseconds without it.
/// Had it found one, it would load another SQLite than the other providers; without the search the runtime binds
/// <c>e_sqlite3</c> from the application's native assets, as for every provider (<c>SqliteNativeLibrary</c>).</item>
/// </list>
/// </summary>
internal static class SystemDataSettings
{
    private static readonly Lazy<bool> Applied = new(static () =>
    {
        if (Environment.GetEnvironmentVariable("No_SQLiteLog") is null && Environment.GetEnvironmentVariable("Initialize_SQLiteLog") is null)
        {
            Environment.SetEnvironmentVariable("No_SQLiteLog", "1");
        }

        if (Environment.GetEnvironmentVariable("No_PreLoadSQLite") is null)
        {
            Environment.SetEnvironmentVariable("No_PreLoadSQLite", "1");
        }

        return true;
    });

    /// <summary>Called before System.Data.SQLite creates its first connection in this process.</summary>
    public static void Apply() => _ = Applied.Value;
}
