using BlockDb.Drivers.Native;
using SQLitePCL;

namespace BlockDb.MicrosoftData.Raw;

/// <summary>SQLite failures on a Microsoft.Data.Sqlite handle, read through SQLitePCL.raw, in the message format every native binding uses (<see cref="SqliteErrorText"/>).</summary>
internal static class RawErrors
{
    private static readonly Func<int, string?> Describe = static rc => raw.sqlite3_errstr(rc).utf8_to_string();

    /// <summary>The failure of a call on <paramref name="db"/> that returned <paramref name="rc"/>, with the connection's message and extended code.</summary>
    public static BlockDbException FromConnection(sqlite3 db, int rc, string context) =>
        SqliteErrorText.Create(rc, SqliteErrorText.Extended(rc, raw.sqlite3_extended_errcode(db)), context, raw.sqlite3_errmsg(db).utf8_to_string(), Describe);

    /// <summary>A failure whose message <c>sqlite3_exec</c> returned.</summary>
    public static BlockDbException FromExec(sqlite3 db, int rc, string context, string? message) =>
        SqliteErrorText.Create(rc, SqliteErrorText.Extended(rc, raw.sqlite3_extended_errcode(db)), context, message, Describe);

    /// <summary>The connection's page-cache counters (<c>sqlite3_db_status</c>).</summary>
    public static SqliteCacheStats ReadCacheStats(sqlite3 db)
    {
        long Read(int op)
        {
            var rc = raw.sqlite3_db_status(db, op, out var current, out _, 0);
            return rc == raw.SQLITE_OK ? current : throw FromConnection(db, rc, $"sqlite3_db_status({op})");
        }

        return new SqliteCacheStats(Read(SqliteCacheCounters.Hit), Read(SqliteCacheCounters.Miss), Read(SqliteCacheCounters.Write), Read(SqliteCacheCounters.Spill));
    }
}
