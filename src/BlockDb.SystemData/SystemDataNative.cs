using System.Runtime.InteropServices;

namespace BlockDb.SystemData;

/// <summary>The native calls Mono.Data.Sqlite does not expose: the library version, the autocommit state, and one <c>sqlite3_exec</c> without its retries.</summary>
internal static partial class SystemDataNative
{
    [LibraryImport("e_sqlite3")]
    internal static partial nint sqlite3_libversion();

    [LibraryImport("e_sqlite3")]
    internal static partial int sqlite3_get_autocommit(nint db);

    [LibraryImport("e_sqlite3", StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int sqlite3_exec(nint db, string sql, nint callback, nint argument, nint errmsg);

    [LibraryImport("e_sqlite3")]
    internal static partial int sqlite3_extended_errcode(nint db);

    [LibraryImport("e_sqlite3")]
    internal static partial nint sqlite3_errmsg(nint db);
}
