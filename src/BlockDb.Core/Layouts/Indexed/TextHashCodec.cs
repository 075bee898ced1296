using BlockDb.Drivers;

namespace BlockDb.Layouts.Indexed;

/// <summary><see cref="BlockLayout.TextHash"/>: the base64 text, as Duplicati stores it.</summary>
internal readonly struct TextHashCodec : IHashCodec
{
    // The canonical text of the bytes (a string per bind: the driver contract binds text from a string).
    public static void Bind(ISqliteStatement statement, int index, in BlockHash hash) => statement.BindText(index, hash.ToString());

    public static string Read(ISqliteStatement statement, int column) =>
        statement.ColumnText(column) ?? throw new BlockDbFormatException("A stored block hash is NULL.");

    // The stored text decoded (the text is read as a string first: the layout stores text).
    public static BlockHash ReadBinary(ISqliteStatement statement, int column) =>
        BlockHash.TryParse(Read(statement, column), out var hash) ? hash : throw new BlockDbFormatException("A stored block hash is not canonical base64 of 1 to 66 bytes.");
}
