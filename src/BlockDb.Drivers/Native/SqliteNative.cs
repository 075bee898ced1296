using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

[assembly: DisableRuntimeMarshalling]

namespace BlockDb.Drivers.Native;

/// <summary>
/// Direct bindings to the native <c>e_sqlite3</c> library that the SQLitePCLRaw bundle ships
/// (<c>runtimes/&lt;rid&gt;/native/libe_sqlite3.so</c>, found through the application's deps.json), the one library all
/// three SQLite providers run on: PInvoke opens its connections here, Microsoft.Data.Sqlite (through SQLitePCL) and
/// System.Data.SQLite 2.x (its own <c>DllImport("e_sqlite3")</c>) bind the same file, so a <c>sqlite3*</c> either of them
/// opened is valid for these calls. Every signature is blittable (handles are <see cref="nint"/>, strings are UTF-8
/// pointers), so the generated stubs do no marshalling. See <see href="https://www.sqlite.org/c3ref/funclist.html"/>.
/// </summary>
internal static unsafe partial class SqliteNative
{
    private const string Library = "e_sqlite3";

    internal const int SQLITE_OK = 0;
    internal const int SQLITE_MISUSE = 21;
    internal const int SQLITE_RANGE = 25;
    internal const int SQLITE_ROW = 100;
    internal const int SQLITE_DONE = 101;

    internal const int SQLITE_NULL = 5;

    internal const int SQLITE_OPEN_READONLY = 0x00000001;
    internal const int SQLITE_OPEN_READWRITE = 0x00000002;
    internal const int SQLITE_OPEN_CREATE = 0x00000004;
    internal const int SQLITE_OPEN_NOMUTEX = 0x00008000;
    internal const int SQLITE_OPEN_EXRESCODE = 0x02000000;

    internal const uint SQLITE_PREPARE_PERSISTENT = 0x01;

    /// <summary>The <c>SQLITE_STATIC</c> destructor: SQLite neither copies nor frees the bound bytes.</summary>
    internal const nint SQLITE_STATIC = 0;

    [LibraryImport(Library)]
    internal static partial byte* sqlite3_libversion();

    [LibraryImport(Library)]
    internal static partial int sqlite3_open_v2(byte* filename, nint* ppDb, int flags, byte* zVfs);

    [LibraryImport(Library)]
    internal static partial int sqlite3_close_v2(nint db);

    [LibraryImport(Library)]
    internal static partial int sqlite3_extended_result_codes(nint db, int onoff);

    [LibraryImport(Library)]
    internal static partial byte* sqlite3_errmsg(nint db);

    [LibraryImport(Library)]
    internal static partial int sqlite3_errcode(nint db);

    [LibraryImport(Library)]
    internal static partial int sqlite3_extended_errcode(nint db);

    [LibraryImport(Library)]
    internal static partial byte* sqlite3_errstr(int rc);

    [LibraryImport(Library)]
    internal static partial int sqlite3_prepare_v3(nint db, byte* zSql, int nByte, uint prepFlags, nint* ppStmt, byte** pzTail);

    [LibraryImport(Library)]
    internal static partial int sqlite3_finalize(nint stmt);

    [LibraryImport(Library)]
    internal static partial int sqlite3_reset(nint stmt);

    [LibraryImport(Library)]
    internal static partial int sqlite3_clear_bindings(nint stmt);

    // [SuppressGCTransition] (no switch to preemptive GC mode around the call, which costs more than these calls do): only
    // for calls that return at once, never block and never call back into .NET. The binds take only the connection's
    // mutex, which one thread at a time uses (a session's calls are serialized, G1), and free nothing of ours: every value
    // BlockDb binds is SQLITE_STATIC (text and BLOBs alike: no destructor to call back) or an integer. SQLite's log callback (sqlite3_log, where an application may install
    // one) is reached from a bind only by misuse (a finalized statement, a bind while busy), which the statement's state
    // checks refuse before the call (NativeStatement.CheckBindable). The getters read one field; the sqlite3_column_*
    // calls read the current row's value (converting it in memory at most: a hash or a number, no I/O, no callback),
    // checked readable first (NativeStatement.CheckReadable).
    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial int sqlite3_bind_int64(nint stmt, int index, long value);

    [LibraryImport(Library)]
    internal static partial int sqlite3_bind_double(nint stmt, int index, double value);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial int sqlite3_bind_text(nint stmt, int index, byte* text, int byteCount, nint destructor);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial int sqlite3_bind_blob(nint stmt, int index, byte* value, int byteCount, nint destructor);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial int sqlite3_bind_null(nint stmt, int index);

    [LibraryImport(Library)]
    internal static partial int sqlite3_bind_zeroblob(nint stmt, int index, int length);

    [LibraryImport(Library)]
    internal static partial int sqlite3_bind_parameter_count(nint stmt);

    [LibraryImport(Library)]
    internal static partial byte* sqlite3_bind_parameter_name(nint stmt, int index);

    [LibraryImport(Library)]
    internal static partial int sqlite3_step(nint stmt);

    [LibraryImport(Library)]
    internal static partial int sqlite3_column_count(nint stmt);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial long sqlite3_column_int64(nint stmt, int column);

    [LibraryImport(Library)]
    internal static partial double sqlite3_column_double(nint stmt, int column);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial byte* sqlite3_column_text(nint stmt, int column);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial byte* sqlite3_column_blob(nint stmt, int column);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial int sqlite3_column_bytes(nint stmt, int column);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial int sqlite3_column_type(nint stmt, int column);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial int sqlite3_changes(nint db);

    [LibraryImport(Library)]
    internal static partial int sqlite3_db_status(nint db, int op, int* current, int* highwater, int resetFlag);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial int sqlite3_get_autocommit(nint db);

    [LibraryImport(Library)]
    [SuppressGCTransition]
    internal static partial long sqlite3_last_insert_rowid(nint db);

    [LibraryImport(Library)]
    internal static partial int sqlite3_exec(nint db, byte* sql, nint callback, nint callbackArgument, byte** errmsg);

    [LibraryImport(Library)]
    internal static partial void sqlite3_free(void* memory);

    [LibraryImport(Library)]
    internal static partial byte* sqlite3_db_filename(nint db, byte* name);
}
