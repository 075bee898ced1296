using BlockDb.Drivers;
using BlockDb.Drivers.Native;

namespace BlockDb.PInvoke;

// Opening: sqlite3_open_v2 with the mode's flags, multi-thread mode and extended result codes; a failed open reads its error and closes the handle.
internal sealed unsafe partial class PInvokeConnection
{
    internal static PInvokeConnection Open(SqliteOpenOptions options)
    {
        var path = options.Path;
        ArgumentNullException.ThrowIfNull(path, nameof(options));
        var flags = options.Mode switch
        {
            SqliteOpenMode.ReadWriteCreate => SqliteNative.SQLITE_OPEN_READWRITE | SqliteNative.SQLITE_OPEN_CREATE,
            SqliteOpenMode.ReadWrite => SqliteNative.SQLITE_OPEN_READWRITE,
            SqliteOpenMode.ReadOnly => SqliteNative.SQLITE_OPEN_READONLY,
            _ => throw new ArgumentOutOfRangeException(nameof(options), options.Mode, "Unknown SQLite open mode."),
        };

        // Multi-thread mode (https://www.sqlite.org/threadsafe.html): no connection mutex taken and released around every
        // native call (about 600 instructions of a KeyMap find). BlockDb already serializes each connection's use: one
        // party at a time through its session's or cursor's gate, the cache-counter sampling included [G1].
        flags |= SqliteNative.SQLITE_OPEN_NOMUTEX | SqliteNative.SQLITE_OPEN_EXRESCODE;

        var fileName = NativeText.ToUtf8Z(path);
        nint db = 0;
        int rc;
        fixed (byte* pFileName = fileName)
        {
            rc = SqliteNative.sqlite3_open_v2(pFileName, &db, flags, null);
        }

        if (rc != SqliteNative.SQLITE_OK)
        {
            // open_v2 returns a handle even on failure (unless out of memory); read its error, then close it.
            var error = SqliteErrors.FromConnection(db, rc, $"Cannot open SQLite database {Quoted.Path(path)} ({options.Mode})");
            if (db != 0)
            {
                _ = SqliteNative.sqlite3_close_v2(db);
            }

            throw error;
        }

        var handle = new SqliteConnectionHandle(db);
        rc = SqliteNative.sqlite3_extended_result_codes(db, 1);
        if (rc != SqliteNative.SQLITE_OK)
        {
            var error = SqliteErrors.FromConnection(db, rc, $"Cannot enable extended result codes on {Quoted.Path(path)}");
            handle.Dispose();
            throw error;
        }

        return new PInvokeConnection(handle, path);
    }
}
