
using BlockDb.Layouts.Indexed;

namespace BlockDb.Layouts;

/// <summary>
/// <see cref="BlockLayout.TextHash"/>, Duplicati's schema: base64 TEXT hashes under a unique (Hash, Size) index, readable
/// by SQL written for Duplicati. Files of schema version 1 (which named no layout) are this layout.
/// </summary>
internal sealed class TextHashLayout : IndexedLayout<TextHashCodec>
{
    private TextHashLayout()
    {
    }

    public static TextHashLayout Instance { get; } = new();

    public override BlockLayout Layout => BlockLayout.TextHash;

    public override bool TextHashes => true;
}
