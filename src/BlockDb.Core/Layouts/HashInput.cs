using System.Diagnostics.CodeAnalysis;

namespace BlockDb.Layouts;

/// <summary>
/// A block hash as the caller gave it: base64 text (the text calls) or bytes (the <see cref="BlockHash"/> calls), both
/// already validated. Each layout reads the form it stores: the text layout binds the text, the BLOB layouts and the
/// key map the bytes; a conversion happens only when the caller's form is not the stored one. A struct, so it travels
/// through a write without allocating. The stores take it only after <see cref="Validate"/>.
/// </summary>
internal readonly struct HashInput
{
    private readonly string? _text;
    private readonly BlockHash _bytes;
    private readonly bool _binary;

    private HashInput(string? text, in BlockHash bytes, bool binary)
    {
        _text = text;
        _bytes = bytes;
        _binary = binary;
    }

    /// <summary>A hash text, to be checked by <see cref="Validate"/>.</summary>
    public static HashInput FromText(string text) => new(text, default, binary: false);

    /// <summary>A hash as bytes, to be checked by <see cref="Validate"/>.</summary>
    public static HashInput FromBytes(in BlockHash hash) => new(null, hash, binary: true);

    /// <summary>Throws when the text is not a valid hash text or the bytes are empty.</summary>
    /// <exception cref="ArgumentException">The hash is invalid (null text: <see cref="ArgumentNullException"/>).</exception>
    public void Validate(string paramName)
    {
        if (!_bytes.IsEmpty)
        {
            return;
        }

        if (_text is not null || !_binary)
        {
            BlockHash.Validate(_text, paramName);
        }
        else
        {
            BlockHash.Validate(_bytes, paramName);
        }
    }

    /// <summary>The hash as base64 text (allocates when the caller gave bytes).</summary>
    public string AsText() => _text ?? _bytes.ToString();

    /// <summary>The hash as bytes (decoded when the caller gave text).</summary>
    public BlockHash AsBytes()
    {
        if (_text is null)
        {
            return _bytes;
        }

        Span<byte> bytes = stackalloc byte[BlockHash.MaxBytes];
        return new BlockHash(bytes[..BlockHash.Decode(_text, bytes)]);
    }

    /// <summary>The hash bytes: the caller's own, or <paramref name="scratch"/> (at least <see cref="BlockHash.MaxBytes"/>) decoded from the text.</summary>
    [UnscopedRef]
    public ReadOnlySpan<byte> GetBytes(Span<byte> scratch) => _text is null ? _bytes.Bytes : scratch[..BlockHash.Decode(_text, scratch)];

    /// <summary>The text, for messages.</summary>
    public override string ToString() => AsText();
}
