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

    // The stored text decoded (the text is read as a string first: the layout stores text).
    public static BlockHash ReadBinary(ISqliteStatement statement, int column) =>
        BlockHash.TryParse(Read(statement, column), out var hash) ? hash : throw new BlockDbFormatException("A stored block hash is not canonical base64 of 1 to 66 bytes.");
}
