
using BlockDb.Layouts.Indexed;

namespace BlockDb.Layouts;

/// <summary><see cref="BlockLayout.BlobHash"/>: the decoded hash bytes as a BLOB under a unique (Hash, Size) index.</summary>
internal sealed class BlobHashLayout : IndexedLayout<BlobHashCodec>
{
    private BlobHashLayout()
    {
    }

    public static BlobHashLayout Instance { get; } = new();

    public override BlockLayout Layout => BlockLayout.BlobHash;

    public override bool TextHashes => false;
}
