using BlockDb.Drivers.Native;

namespace BlockDb.MicrosoftData.Raw;

/// <summary>The column reads of <see cref="RawStatement"/>: the current row's values, read with the statement's pointer (<see cref="RawNative"/>).</summary>
internal sealed partial class RawStatement
{
    public long ColumnInt64(int column) => RawNative.sqlite3_column_int64(CheckReadable(column, nameof(ColumnInt64)), column);

    public double ColumnDouble(int column) => RawNative.sqlite3_column_double(CheckReadable(column, nameof(ColumnDouble)), column);

    public bool ColumnIsNull(int column) => RawNative.sqlite3_column_type(CheckReadable(column, nameof(ColumnIsNull)), column) == SqliteCodes.NullType;

    public string? ColumnText(int column)
    {
        var stmt = CheckReadable(column, nameof(ColumnText));
        if (RawNative.sqlite3_column_type(stmt, column) == SqliteCodes.NullType)
        {
            return null;
        }

        // Not NULL, so a null pointer means SQLite failed to convert the value (out of memory).
        return RawNative.ColumnText(stmt, column) ?? throw OutOfMemory(nameof(ColumnText));
    }

    public int ColumnBlob(int column, Span<byte> destination)
    {
        var stmt = CheckReadable(column, nameof(ColumnBlob));

        // One native call for a value (a hash): only an empty result asks whether it was NULL, empty, or out of memory.
        var bytes = RawNative.ColumnBlob(stmt, column);
        if (bytes.IsEmpty)
        {
            if (RawNative.sqlite3_column_type(stmt, column) == SqliteCodes.NullType)
            {
                return -1;
            }

            if (RawNative.sqlite3_column_bytes(stmt, column) > 0)
            {
                throw OutOfMemory(nameof(ColumnBlob));
            }
        }

        bytes[..Math.Min(bytes.Length, destination.Length)].CopyTo(destination);
        return bytes.Length;
    }
}
