using System.Text;

namespace BlockDb.Drivers.Native;

/// <summary>UTF-8 text across the native boundary: C strings for <c>sqlite3_open_v2</c> and <c>sqlite3_exec</c>, and text columns read back.</summary>
internal static unsafe class NativeText
{
    /// <summary>The UTF-8 bytes of <paramref name="value"/> followed by a NUL.</summary>
    public static byte[] ToUtf8Z(string value)
    {
        var bytes = new byte[Encoding.UTF8.GetByteCount(value) + 1];
        _ = Encoding.UTF8.GetBytes(value, bytes);
        return bytes;
    }

    /// <summary>
    /// Reads a column as text: <see langword="null"/> for SQL NULL, else its UTF-8 bytes decoded. A failure names
    /// <paramref name="call"/> and, when given, <paramref name="statement"/> (the message is built only then).
    /// </summary>
    public static string? ReadColumn(nint db, nint stmt, int column, string call, string? statement = null)
    {
        if (SqliteNative.sqlite3_column_type(stmt, column) == SqliteNative.SQLITE_NULL)
        {
            return null;
        }

        var text = SqliteNative.sqlite3_column_text(stmt, column);
        var length = SqliteNative.sqlite3_column_bytes(stmt, column);
        if (text == null)
        {
            // Not NULL, so SQLite failed to convert the value (out of memory).
            var rc = SqliteNative.sqlite3_errcode(db);
            throw SqliteErrors.FromConnection(db, rc == SqliteNative.SQLITE_OK ? SqliteCodes.NoMem : rc, statement is null ? call : $"{call} of statement '{statement}'");
        }

        return Encoding.UTF8.GetString(text, length);
    }

}
