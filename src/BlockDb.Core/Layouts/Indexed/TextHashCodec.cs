using BlockDb.Drivers;

namespace BlockDb.Layouts.Indexed;

/// <summary><see cref="BlockLayout.TextHash"/>: the base64 text, as Duplicati stores it.</summary>
internal readonly struct TextHashCodec : IHashCodec
{
    // The canonical text of the bytes (a string per bind: the driver contract binds text from a string).
    public static void Bind(ISqliteStatement statement, int index, in BlockHash hash) => statement.BindText(index, hash.ToString());

    public static string Read(ISqliteStatement statement, int column) =>
        statement.ColumnText(column) ?? throw new BlockDbFormatException("A stored block hash is NULL.");

    // The stored text's UTF-8 bytes decoded, no string built (ColumnBlob reads a TEXT value as its UTF-8 bytes; a
    // longer text is refused by its length alone).
    public static BlockHash ReadBinary(ISqliteStatement statement, int column)
    {
        Span<byte> text = stackalloc byte[BlockHash.MaxLength];
        var length = statement.ColumnBlob(column, text);
        return length < 0
            ? throw new BlockDbFormatException("A stored block hash is NULL.")
            : length <= text.Length && BlockHash.TryParseUtf8(text[..length], out var hash)
                ? hash
                : throw new BlockDbFormatException("A stored block hash is not canonical base64 of 1 to 66 bytes.");
    }
}
