using System.Runtime.InteropServices;

namespace BlockDb.MicrosoftData.Raw;

/// <summary>
/// The per-row calls of <see cref="RawStatement"/> (bind, step, reset, column reads), P/Invoked on the same <c>e_sqlite3</c>
/// SQLitePCL loads, with the pointers of SQLitePCL's handles. SQLitePCL's own entry points add a provider dispatch and a
/// <see cref="SafeHandle"/> add-ref and release to each call, about a tenth of a lookup (issue 25). The handles still own
/// the lifetimes: a statement is prepared and finalized through SQLitePCL, and its pointer is used only while it is live.
/// </summary>
internal static unsafe partial class RawNative
{
    private const string Library = "e_sqlite3";

    /// <summary><c>SQLITE_TRANSIENT</c>: SQLite copies the bound bytes before the call returns.</summary>
    private const nint Transient = -1;

    [LibraryImport(Library)]
    internal static partial int sqlite3_bind_int64(nint stmt, int index, long value);

    [LibraryImport(Library)]
    internal static partial int sqlite3_bind_double(nint stmt, int index, double value);

    [LibraryImport(Library)]
    internal static partial int sqlite3_bind_null(nint stmt, int index);

    [LibraryImport(Library)]
    internal static partial int sqlite3_bind_zeroblob(nint stmt, int index, int length);

    [LibraryImport(Library)]
    internal static partial int sqlite3_step(nint stmt);

    [LibraryImport(Library)]
    internal static partial int sqlite3_reset(nint stmt);

    [LibraryImport(Library)]
    internal static partial long sqlite3_column_int64(nint stmt, int column);

    [LibraryImport(Library)]
    internal static partial double sqlite3_column_double(nint stmt, int column);

    [LibraryImport(Library)]
    internal static partial int sqlite3_column_type(nint stmt, int column);

    [LibraryImport(Library)]
    internal static partial int sqlite3_column_bytes(nint stmt, int column);

    [LibraryImport(Library)]
    internal static partial int sqlite3_changes(nint db);

    [LibraryImport(Library)]
    internal static partial int sqlite3_get_autocommit(nint db);

    /// <summary>Binds a copy of <paramref name="value"/> (not empty: SQLite binds a null pointer as NULL).</summary>
    internal static int BindBlob(nint stmt, int index, ReadOnlySpan<byte> value)
    {
        fixed (byte* bytes = value)
        {
            return sqlite3_bind_blob(stmt, index, bytes, value.Length, Transient);
        }
    }

    /// <summary>Binds a copy of the first <paramref name="length"/> bytes of <paramref name="buffer"/> as UTF-8 text (a non-empty buffer, so empty text is "" and not NULL).</summary>
    internal static int BindText(nint stmt, int index, ReadOnlySpan<byte> buffer, int length)
    {
        fixed (byte* bytes = buffer)
        {
            return sqlite3_bind_text(stmt, index, bytes, length, Transient);
        }
    }

    /// <summary>The current row's BLOB (or its value read as one); empty for NULL, for an empty value, and when SQLite ran out of memory.</summary>
    internal static ReadOnlySpan<byte> ColumnBlob(nint stmt, int column)
    {
        var bytes = sqlite3_column_blob(stmt, column);
        return bytes is null ? default : new ReadOnlySpan<byte>(bytes, sqlite3_column_bytes(stmt, column));
    }

    /// <summary>The current row's text as a string; <see langword="null"/> when SQLite returned no pointer.</summary>
    internal static string? ColumnText(nint stmt, int column)
    {
        var text = sqlite3_column_text(stmt, column);
        return text is null ? null : System.Text.Encoding.UTF8.GetString(text, sqlite3_column_bytes(stmt, column));
    }

    [LibraryImport(Library)]
    private static partial int sqlite3_bind_blob(nint stmt, int index, byte* value, int length, nint destructor);

    [LibraryImport(Library)]
    private static partial int sqlite3_bind_text(nint stmt, int index, byte* value, int length, nint destructor);

    [LibraryImport(Library)]
    private static partial byte* sqlite3_column_blob(nint stmt, int column);

    [LibraryImport(Library)]
    private static partial byte* sqlite3_column_text(nint stmt, int column);
}
