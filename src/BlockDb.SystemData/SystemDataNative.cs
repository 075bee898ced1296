using System.Runtime.InteropServices;

namespace BlockDb.SystemData;

/// <summary>The native calls System.Data.SQLite does not expose: one <c>sqlite3_exec</c> without its retries, and its error.</summary>
internal static partial class SystemDataNative
{
    [LibraryImport("e_sqlite3", StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int sqlite3_exec(nint db, string sql, nint callback, nint argument, nint errmsg);

    [LibraryImport("e_sqlite3")]
    internal static partial int sqlite3_extended_errcode(nint db);

    [LibraryImport("e_sqlite3")]
    internal static partial nint sqlite3_errmsg(nint db);
}
