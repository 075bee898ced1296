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
        return Convert.ToBase64String(bytes[..ReadInto(statement, column, bytes)]);
    }

    public static BlockHash ReadBinary(ISqliteStatement statement, int column)
    {
        Span<byte> bytes = stackalloc byte[BlockHash.MaxBytes];
        return new BlockHash(bytes[..ReadInto(statement, column, bytes)]);
    }

    /// <summary>The stored hash's bytes into <paramref name="bytes"/> (<see cref="BlockHash.MaxBytes"/> long); their count.</summary>
    private static int ReadInto(ISqliteStatement statement, int column, Span<byte> bytes)
    {
        var length = statement.ColumnBlob(column, bytes);
        return length is >= 1 and <= BlockHash.MaxBytes
            ? length
            : throw new BlockDbFormatException(string.Create(CultureInfo.InvariantCulture, $"A stored block hash is {length} bytes; BlockDb stores 1 to {BlockHash.MaxBytes}."));
    }
}
