using BlockDb.Drivers;

namespace BlockDb.Layouts.Indexed;

/// <summary><see cref="BlockLayout.TextHash"/>: the base64 text, as Duplicati stores it.</summary>
internal readonly struct TextHashCodec : IHashCodec
{
    // The canonical text (a text call's hash was checked canonical, so this is the caller's text again); a string per bind.
    public static void Bind(ISqliteStatement statement, int index, in BlockHash hash) => statement.BindText(index, hash.ToString());

    public static string Read(ISqliteStatement statement, int column) =>
        statement.ColumnText(column) ?? throw new BlockDbFormatException("A stored block hash is NULL.");
}
