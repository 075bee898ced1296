using System.Globalization;
using SQLitePCL;

namespace BlockDb.Stress;

/// <summary>
/// SQLite's error and notice log (<see href="https://www.sqlite.org/errlog.html"/>) printed as <c>SQLITELOG</c> lines
/// with the process and time: among them <c>SQLITE_NOTICE_RECOVER_ROLLBACK</c> (283), written whenever a connection
/// plays back a hot journal. In the rollback-journal modes a hot journal is left only by a writer that died (or whose
/// locks were lost), so these lines place every recovery beside the kills and the writes around it. All three
/// providers run the same <c>e_sqlite3</c> library in a process, so one registration covers them; it must come
/// before the first connection opens (the library is not yet initialized).
/// </summary>
internal static class SqliteLog
{
    public static void Start(string role)
    {
        Batteries_V2.Init();
        var rc = raw.sqlite3_config_log(
            (_, code, message) => Output.Line(string.Create(
                CultureInfo.InvariantCulture, $"SQLITELOG {role} pid {Environment.ProcessId} tid {Environment.CurrentManagedThreadId} code {code} @{DateTime.UtcNow.Ticks}: {message.utf8_to_string()}")),
            null);
        if (rc != raw.SQLITE_OK)
        {
            Output.Line($"NOTE sqlite3_config(SQLITE_CONFIG_LOG) returned {rc}: SQLite's log is not captured");
        }
    }
}
