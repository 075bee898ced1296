using BlockDb.Stores;

namespace BlockDb.Layouts;

/// <summary>
/// <see cref="BlockLayout.TextHash"/>, Duplicati's schema: base64 TEXT hashes under a unique (Hash, Size) index.
/// Schema version 1, which records no layout name, so that older BlockDb builds and SQL written for Duplicati read it.
/// </summary>
internal sealed class TextHashLayout : IndexedLayout<TextHashCodec>
{
    /// <summary>Its schema version: 1.</summary>
    public const int Version = 1;

    private TextHashLayout()
    {
    }

    public static TextHashLayout Instance { get; } = new();

    public override BlockLayout Layout => BlockLayout.TextHash;

    public override int SchemaVersion => Version;

    public override bool TextHashes => true;
}
