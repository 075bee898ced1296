using System.Buffers;
using System.Buffers.Text;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Text;

namespace BlockDb;

/// <summary>
/// A block or blockset hash as bytes: 1 to <see cref="MaxBytes"/> (66) bytes held inline, so passing one allocates
/// nothing (SHA-256 is 32 bytes). Its text form is Duplicati's, standard base64 with <c>=</c> padding (44 characters
/// for SHA-256): read by <see cref="Parse"/>, written by <see cref="ToString"/>. The <see langword="default"/> value is
/// empty and refused by every call.
/// </summary>
public readonly struct BlockHash : IEquatable<BlockHash>
{
    /// <summary>The longest accepted hash text: 88 characters (66 bytes without padding; SHA-512 is 64 bytes with padding).</summary>
    public const int MaxLength = 88;

    /// <summary>The longest hash in bytes: 66, what <see cref="MaxLength"/> characters of base64 decode to.</summary>
    public const int MaxBytes = 66;

    private readonly Buffer _bytes;
    private readonly byte _length;

    /// <summary>A hash from its bytes (copied).</summary>
    /// <param name="bytes">1 to <see cref="MaxBytes"/> bytes, for example a SHA-256 digest (32 bytes).</param>
    /// <exception cref="ArgumentException"><paramref name="bytes"/> is empty or longer than <see cref="MaxBytes"/>.</exception>
    public BlockHash(ReadOnlySpan<byte> bytes)
    {
        if (bytes.IsEmpty || bytes.Length > MaxBytes)
        {
            throw new ArgumentException($"A block hash is 1 to {MaxBytes} bytes; this one is {bytes.Length} (SHA-256 is 32).", nameof(bytes));
        }

        bytes.CopyTo(_bytes);
        _length = (byte)bytes.Length;
    }

    /// <summary>The hash's length in bytes (0 for the empty <see langword="default"/> value).</summary>
    public int Length => _length;

    /// <summary>Whether this is the empty <see langword="default"/> value, which no call accepts.</summary>
    public bool IsEmpty => _length == 0;

    /// <summary>The hash bytes.</summary>
    [UnscopedRef]
    public ReadOnlySpan<byte> Bytes
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => ((ReadOnlySpan<byte>)_bytes)[.._length];
    }

    /// <summary>Parses a hash text (canonical standard base64 with padding).</summary>
    /// <param name="text">Canonical padded standard base64 of 1 to <see cref="MaxBytes"/> bytes (the low bits the last character leaves unused are zero).</param>
    /// <returns>The hash.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="text"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="text"/> is not a valid hash text (the message says what is allowed).</exception>
    public static BlockHash Parse(string text)
    {
        if (!TryParse(text, out var hash))
        {
            Validate(text, nameof(text));
        }

        return hash;
    }

    /// <summary>Parses a hash text; <see langword="false"/> (and the empty value) when it is not valid.</summary>
    /// <param name="text">The hash text.</param>
    /// <param name="hash">The hash, when valid.</param>
    /// <returns>Whether <paramref name="text"/> was valid.</returns>
    public static bool TryParse([NotNullWhen(true)] string? text, out BlockHash hash)
    {
        hash = text is null ? default : new BlockHash(text);
        return !hash.IsEmpty;
    }

    /// <summary>The hash as standard base64 with padding (the text form every text call takes); empty for the empty value.</summary>
    public override string ToString() => Convert.ToBase64String(Bytes);

    /// <inheritdoc/>
    public bool Equals(BlockHash other) => Bytes.SequenceEqual(other.Bytes);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is BlockHash other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode()
    {
        var hash = default(HashCode);
        hash.AddBytes(Bytes);
        return hash.ToHashCode();
    }

    /// <summary>Whether two hashes have the same bytes.</summary>
    public static bool operator ==(BlockHash left, BlockHash right) => left.Equals(right);

    /// <summary>Whether two hashes differ.</summary>
    public static bool operator !=(BlockHash left, BlockHash right) => !left.Equals(right);

    /// <summary>Throws when <paramref name="hash"/> is the empty value.</summary>
    /// <param name="hash">The hash to check.</param>
    /// <param name="paramName">The caller's parameter name.</param>
    /// <exception cref="ArgumentException"><paramref name="hash"/> is empty.</exception>
    internal static void Validate(in BlockHash hash, string paramName)
    {
        if (hash.IsEmpty)
        {
            throw new ArgumentException($"The hash is empty (default(BlockHash)); give 1 to {MaxBytes} bytes, for example a SHA-256 digest.", paramName);
        }
    }

    /// <summary>Whether <paramref name="hash"/> is a valid hash text. Allocates nothing.</summary>
    /// <param name="hash">The text to check.</param>
    /// <returns><see langword="true"/> when valid.</returns>
    internal static bool IsValid([NotNullWhen(true)] string? hash) => hash is not null && TryDecode(hash, stackalloc byte[MaxBytes]) > 0;

    /// <summary>Decodes a valid hash text into its bytes (for the BLOB layouts).</summary>
    /// <returns>The number of bytes written.</returns>
    internal static int Decode(string hash, Span<byte> into)
    {
        var written = TryDecode(hash, into);
        return written > 0
            ? written
            : throw new ArgumentException($"The hash {Quoted.Value(hash)} ({hash.Length} characters) is not a valid hash text that decodes to at most {into.Length} bytes.", nameof(hash));
    }

    // The hash parsed straight into this value's buffer; the empty value when the text is not valid.
    private BlockHash(string text)
    {
        var written = TryDecode(text, _bytes);
        _length = written > 0 ? (byte)written : (byte)0;
    }

    /// <summary>
    /// The one decoder of hash text: canonical padded standard base64 of 1 to <see cref="MaxBytes"/> bytes into
    /// <paramref name="into"/>, or −1 (nothing promised in <paramref name="into"/>) for any other text. The alphabet is
    /// checked first because <see cref="Base64.DecodeFromUtf8(ReadOnlySpan{byte}, Span{byte}, out int, out int, bool)"/>
    /// skips whitespace; both steps are vectorised.
    /// </summary>
    internal static int TryDecode(ReadOnlySpan<char> text, Span<byte> into)
    {
        if (!IsBase64Shaped(text.Length) || text.ContainsAnyExcept(Base64Alphabet))
        {
            return -1;
        }

        Span<byte> ascii = stackalloc byte[MaxLength];
        Ascii.FromUtf16(text, ascii, out _);
        return DecodeCanonical(ascii[..text.Length], into);
    }

    /// <summary>As <see cref="TryDecode(ReadOnlySpan{char}, Span{byte})"/>, from the text's UTF-8 bytes (a stored TEXT column read without a string).</summary>
    internal static int TryDecodeUtf8(ReadOnlySpan<byte> text, Span<byte> into) =>
        IsBase64Shaped(text.Length) && !text.ContainsAnyExcept(Base64AlphabetUtf8) ? DecodeCanonical(text, into) : -1;

    /// <summary>A hash from the UTF-8 bytes of its text; false (and the empty value) when they are not a valid hash text.</summary>
    internal static bool TryParseUtf8(ReadOnlySpan<byte> text, out BlockHash hash)
    {
        Span<byte> bytes = stackalloc byte[MaxBytes];
        var written = TryDecodeUtf8(text, bytes);
        hash = written > 0 ? new BlockHash(bytes[..written]) : default;
        return written > 0;
    }

    private static bool IsBase64Shaped(int length) => length != 0 && length <= MaxLength && (length & 3) == 0;

    // The base64 alphabet checked, so the bytes are ASCII.
    private static int DecodeCanonical(ReadOnlySpan<byte> ascii, Span<byte> into)
    {
        if (Base64.DecodeFromUtf8(ascii, into, out _, out var written) != OperationStatus.Done || written == 0)
        {
            return -1;
        }

        // Canonical form only: the bits below the last byte must be zero ("AB==" decodes like "AA=="), so one
        // hash has one text and the BLOB layouts, which store the decoded bytes, cannot merge two texts.
        var length = ascii.Length;
        var padding = ascii[^1] == '=' ? (ascii[^2] == '=' ? 2 : 1) : 0;
        return padding == 0 || (Sextet((char)ascii[length - padding - 1]) & (padding == 1 ? 0b11 : 0b1111)) == 0 ? written : -1;
    }

    private const string Base64Characters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";

    private static readonly SearchValues<char> Base64Alphabet = SearchValues.Create(Base64Characters);

    private static readonly SearchValues<byte> Base64AlphabetUtf8 = SearchValues.Create(Encoding.ASCII.GetBytes(Base64Characters));

    private static int Sextet(char c) => c switch
    {
        >= 'A' and <= 'Z' => c - 'A',
        >= 'a' and <= 'z' => c - 'a' + 26,
        >= '0' and <= '9' => c - '0' + 52,
        '+' => 62,
        _ => 63,
    };

    /// <summary>Throws when <paramref name="hash"/> is not a valid hash text.</summary>
    /// <param name="hash">The text to check.</param>
    /// <param name="paramName">The caller's parameter name.</param>
    /// <exception cref="ArgumentNullException"><paramref name="hash"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="hash"/> is empty or not padded standard base64 of 1 to 66 bytes.</exception>
    internal static void Validate(string? hash, string paramName)
    {
        if (IsValid(hash))
        {
            return;
        }

        ArgumentNullException.ThrowIfNull(hash, paramName);
        throw new ArgumentException(
            hash.Length == 0
                ? "The hash is empty; give the block hash as standard base64 with '=' padding (44 characters for SHA-256)."
                : $"The hash {Quoted.Value(hash)} ({hash.Length} characters) is not canonical standard base64 with '=' padding of 1 to 66 bytes (A-Z, a-z, 0-9, '+', '/', length a multiple of 4, at most {MaxLength}, unused low bits of the last character zero; SHA-256 is 44 characters).",
            paramName);
    }

    /// <summary>Throws when <paramref name="size"/> is not a valid block size.</summary>
    /// <param name="size">The size in bytes.</param>
    /// <param name="paramName">The caller's parameter name.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is below 1.</exception>
    internal static void ValidateSize(long size, string paramName)
    {
        if (size < 1)
        {
            throw new ArgumentOutOfRangeException(paramName, size, "A block size is in bytes and must be 1 or more.");
        }
    }


    [InlineArray(MaxBytes)]
    private struct Buffer
    {
        private byte _first;
    }
}
