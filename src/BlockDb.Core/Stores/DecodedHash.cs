using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace BlockDb.Stores;

/// <summary>A hash's bytes decoded from its base64 text, held inline so it can travel in a struct through a write without allocating.</summary>
internal struct DecodedHash
{
    /// <summary>The longest hash in bytes: 66, what <see cref="BlockHash.MaxLength"/> (88 characters) decodes to.</summary>
    public const int MaxBytes = 66;

    private Buffer _bytes;

    public int Length { get; private set; }

    /// <summary>The decoded bytes.</summary>
    [UnscopedRef]
    public ReadOnlySpan<byte> Span => ((ReadOnlySpan<byte>)_bytes)[..Length];

    /// <summary>Decodes a hash text that <see cref="BlockHash.Validate"/> accepted.</summary>
    public static DecodedHash From(string hash)
    {
        var decoded = default(DecodedHash);
        decoded.Length = BlockHash.Decode(hash, decoded._bytes);
        return decoded;
    }

    [InlineArray(MaxBytes)]
    private struct Buffer
    {
        private byte _first;
    }
}
