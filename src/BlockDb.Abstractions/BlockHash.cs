using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

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
    public ReadOnlySpan<byte> Bytes => ((ReadOnlySpan<byte>)_bytes)[.._length];

    /// <summary>Parses a hash text (canonical standard base64 with padding).</summary>
    /// <param name="text">The hash text, as <see cref="IsValid"/> accepts it.</param>
    /// <returns>The hash.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="text"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="text"/> is not a valid hash text (the message says what is allowed).</exception>
    public static BlockHash Parse(string text)
    {
        Validate(text, nameof(text));
        return FromValidText(text);
    }

    /// <summary>Parses a hash text; <see langword="false"/> (and the empty value) when it is not valid.</summary>
    /// <param name="text">The hash text.</param>
    /// <param name="hash">The hash, when valid.</param>
    /// <returns>Whether <paramref name="text"/> was valid.</returns>
    public static bool TryParse([NotNullWhen(true)] string? text, out BlockHash hash)
    {
        hash = IsValid(text) ? FromValidText(text) : default;
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
    public static void Validate(in BlockHash hash, string paramName)
    {
        if (hash.IsEmpty)
        {
            throw new ArgumentException($"The hash is empty (default(BlockHash)); give 1 to {MaxBytes} bytes, for example a SHA-256 digest.", paramName);
        }
    }

    private static BlockHash FromValidText(string text)
    {
        Span<byte> bytes = stackalloc byte[MaxBytes];
        return new BlockHash(bytes[..Decode(text, bytes)]);
    }

    /// <summary>Whether <paramref name="hash"/> is a valid hash text. Allocates nothing.</summary>
    /// <param name="hash">The text to check.</param>
    /// <returns><see langword="true"/> when valid.</returns>
    public static bool IsValid([NotNullWhen(true)] string? hash)
    {
        if (hash is null || hash.Length == 0 || hash.Length > MaxLength || (hash.Length & 3) != 0)
        {
            return false;
        }

        var padding = hash[^1] == '=' ? (hash[^2] == '=' ? 2 : 1) : 0;
        var end = hash.Length - padding;
        for (var i = 0; i < end; i++)
        {
            var c = hash[i];
            if (!(char.IsAsciiLetterOrDigit(c) || c == '+' || c == '/'))
            {
                return false;
            }
        }

        // Canonical form only: the bits below the last byte must be zero ("AB==" decodes like "AA=="), so one
        // hash has one text and the BLOB layouts, which store the decoded bytes, cannot merge two texts.
        return end > 0 && (padding == 0 || (Sextet(hash[end - 1]) & (padding == 1 ? 0b11 : 0b1111)) == 0);
    }

    /// <summary>Decodes a valid hash text into its bytes (for the BLOB layouts).</summary>
    /// <returns>The number of bytes written.</returns>
    public static int Decode(string hash, Span<byte> into) =>
        Convert.TryFromBase64String(hash, into, out var written)
            ? written
            : throw new ArgumentException($"The hash {Quoted.Value(hash)} ({hash.Length} characters) does not decode to at most {into.Length} bytes.", nameof(hash));

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
    public static void Validate(string? hash, string paramName)
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
    public static void ValidateSize(long size, string paramName)
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
