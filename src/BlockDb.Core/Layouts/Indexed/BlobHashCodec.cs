using System.Globalization;
using BlockDb.Drivers;

namespace BlockDb.Layouts.Indexed;

/// <summary><see cref="BlockLayout.BlobHash"/> and <see cref="BlockLayout.KeyMap"/>: the decoded bytes.</summary>
internal readonly struct BlobHashCodec : IHashCodec
{
    public static void Bind(ISqliteStatement statement, int index, in BlockHash hash) => statement.BindBlob(index, hash.Bytes);

    public static string Read(ISqliteStatement statement, int column)
    {
        Span<byte> bytes = stackalloc byte[BlockHash.MaxBytes];
        return Convert.ToBase64String(bytes[..Checked(statement.ColumnBlob(column, bytes))]);
    }

    public static BlockHash ReadBinary(ISqliteStatement statement, int column)
    {
        Span<byte> bytes = stackalloc byte[BlockHash.MaxBytes];
        return Stored(bytes, statement.ColumnBlob(column, bytes));
    }

    /// <summary>A stored hash from its bytes (<paramref name="bytes"/>, at least <see cref="BlockHash.MaxBytes"/> long) and the stored value's length.</summary>
    /// <exception cref="BlockDbFormatException">The stored value is NULL, empty or longer than <see cref="BlockHash.MaxBytes"/>.</exception>
    public static BlockHash Stored(ReadOnlySpan<byte> bytes, int length) => new(bytes[..Checked(length)]);

    private static int Checked(int length) =>
        length is >= 1 and <= BlockHash.MaxBytes
            ? length
            : throw new BlockDbFormatException(string.Create(CultureInfo.InvariantCulture, $"A stored block hash is {length} bytes; BlockDb stores 1 to {BlockHash.MaxBytes}."));
}
