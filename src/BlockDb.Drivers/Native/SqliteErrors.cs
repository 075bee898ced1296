using System.Runtime.InteropServices;

namespace BlockDb.Drivers.Native;

/// <summary>Turns SQLite result codes into <see cref="BlockDbException"/>s.</summary>
internal static unsafe class SqliteErrors
{
    /// <summary>The failure of a call on connection <paramref name="db"/> that returned <paramref name="rc"/>, with the connection's error message.</summary>
    internal static BlockDbException FromConnection(nint db, int rc, string context)
    {
        var message = db != 0 ? Utf8(SqliteNative.sqlite3_errmsg(db)) : null;
        var extended = db != 0 ? SqliteErrorText.Extended(rc, SqliteNative.sqlite3_extended_errcode(db)) : rc;
        return Create(rc, extended, context, message);
    }

    /// <summary>A failure with a known message (for example from <c>sqlite3_exec</c>'s error out-parameter).</summary>
    internal static BlockDbException Create(int rc, int extended, string context, string? message) =>
        SqliteErrorText.Create(rc, extended, context, message, Describe);

    /// <summary>SQLite's English text for a result code (<c>sqlite3_errstr</c>).</summary>
    internal static string? Describe(int rc) => Utf8(SqliteNative.sqlite3_errstr(rc));

    /// <summary>A NUL-terminated UTF-8 string owned by SQLite, or <see langword="null"/> for a null pointer.</summary>
    internal static string? Utf8(byte* text) => text == null ? null : Marshal.PtrToStringUTF8((nint)text);
}
