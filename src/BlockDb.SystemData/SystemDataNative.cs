using System.Runtime.InteropServices;

namespace BlockDb.SystemData;

/// <summary>The two native calls Mono.Data.Sqlite does not expose: the library version and the autocommit state.</summary>
internal static partial class SystemDataNative
{
    [LibraryImport("e_sqlite3")]
    internal static partial nint sqlite3_libversion();

    [LibraryImport("e_sqlite3")]
    internal static partial int sqlite3_get_autocommit(nint db);
}
