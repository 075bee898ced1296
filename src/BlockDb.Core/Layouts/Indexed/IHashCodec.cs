using BlockDb.Drivers;

namespace BlockDb.Layouts.Indexed;

/// <summary>How a layout stores a block hash: the base64 text itself, or its decoded bytes.</summary>
internal interface IHashCodec
{
    /// <summary>Binds a hash as the layout stores it.</summary>
    static abstract void Bind(ISqliteStatement statement, int index, in BlockHash hash);

    /// <summary>Reads a stored hash back as base64 text.</summary>
    static abstract string Read(ISqliteStatement statement, int column);

    /// <summary>Reads a stored hash back as bytes (no base64 text built).</summary>
    static abstract BlockHash ReadBinary(ISqliteStatement statement, int column);
}
