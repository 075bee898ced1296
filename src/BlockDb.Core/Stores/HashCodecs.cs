using System.Globalization;
using BlockDb.Drivers;
using BlockDb.KeyMap;

namespace BlockDb.Stores;

/// <summary>How a layout stores a block hash: the base64 text itself, or its decoded bytes.</summary>
internal interface IHashCodec
{
    /// <summary>Binds a validated hash as the layout stores it.</summary>
    static abstract void Bind(ISqliteStatement statement, int index, in HashInput hash);

    /// <summary>Reads a stored hash back as base64 text.</summary>
    static abstract string Read(ISqliteStatement statement, int column);
}

/// <summary><see cref="BlockLayout.TextHash"/>: the base64 text, as Duplicati stores it.</summary>
internal readonly struct TextHashCodec : IHashCodec
{
    public static void Bind(ISqliteStatement statement, int index, in HashInput hash) => statement.BindText(index, hash.AsText());

    public static string Read(ISqliteStatement statement, int column) =>
        statement.ColumnText(column) ?? throw new BlockDbFormatException("A stored block hash is NULL.");
}

/// <summary><see cref="BlockLayout.BlobHash"/> and <see cref="BlockLayout.KeyMap"/>: the decoded bytes.</summary>
internal readonly struct BlobHashCodec : IHashCodec
{
    public static void Bind(ISqliteStatement statement, int index, in HashInput hash)
    {
        Span<byte> scratch = stackalloc byte[BlockHash.MaxBytes];
        statement.BindBlob(index, hash.GetBytes(scratch));
    }

    public static string Read(ISqliteStatement statement, int column)
    {
        Span<byte> bytes = stackalloc byte[BlockHash.MaxBytes];
        var length = statement.ColumnBlob(column, bytes);
        return length is >= 1 and <= BlockHash.MaxBytes
            ? Convert.ToBase64String(bytes[..length])
            : throw new BlockDbFormatException(string.Create(CultureInfo.InvariantCulture, $"A stored block hash is {length} bytes; BlockDb stores 1 to {BlockHash.MaxBytes}."));
    }
}
