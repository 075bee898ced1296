using BlockDb.Drivers.Native;
using SQLitePCL;

namespace BlockDb.MicrosoftData.Raw;

/// <summary>The column reads of <see cref="RawStatement"/>: the current row's values, read through SQLitePCL.raw.</summary>
internal sealed partial class RawStatement
{
    public long ColumnInt64(int column) => raw.sqlite3_column_int64(CheckReadable(column, nameof(ColumnInt64)), column);

    public double ColumnDouble(int column) => raw.sqlite3_column_double(CheckReadable(column, nameof(ColumnDouble)), column);

    public bool ColumnIsNull(int column) => raw.sqlite3_column_type(CheckReadable(column, nameof(ColumnIsNull)), column) == SqliteCodes.NullType;

    public string? ColumnText(int column)
    {
        var stmt = CheckReadable(column, nameof(ColumnText));
        if (raw.sqlite3_column_type(stmt, column) == SqliteCodes.NullType)
        {
            return null;
        }

        // Not NULL, so a null pointer means SQLite failed to convert the value (out of memory).
        return raw.sqlite3_column_text(stmt, column).utf8_to_string() ?? throw OutOfMemory(nameof(ColumnText));
    }

    public int ColumnBlob(int column, Span<byte> destination)
    {
        var stmt = CheckReadable(column, nameof(ColumnBlob));

        // One native call for a value (a hash): only an empty result asks whether it was NULL, empty, or out of memory.
        var bytes = raw.sqlite3_column_blob(stmt, column);
        if (bytes.IsEmpty)
        {
            if (raw.sqlite3_column_type(stmt, column) == SqliteCodes.NullType)
            {
                return -1;
            }

            if (raw.sqlite3_column_bytes(stmt, column) > 0)
            {
                throw OutOfMemory(nameof(ColumnBlob));
            }
        }

        bytes[..Math.Min(bytes.Length, destination.Length)].CopyTo(destination);
        return bytes.Length;
    }
}
