using System.Buffers.Text;
using BlockDb.Drivers;

namespace BlockDb.Layouts.Indexed;

/// <summary><see cref="BlockLayout.TextHash"/>: the base64 text, as Duplicati stores it.</summary>
internal readonly struct TextHashCodec : IHashCodec
{
    // The canonical text of the bytes, encoded straight to UTF-8 (base64 is ASCII): no string per bind.
    public static void Bind(ISqliteStatement statement, int index, in BlockHash hash)
    {
        Span<byte> text = stackalloc byte[BlockHash.MaxLength];
        Base64.EncodeToUtf8(hash.Bytes, text, out _, out var written);
        statement.BindText(index, text[..written]);
    }

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
