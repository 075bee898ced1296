namespace BlockDb;

/// <summary>Checks block and blockset hashes: standard base64 (<c>A–Z a–z 0–9 + /</c>) with <c>=</c> padding, 1 to 66 hash bytes (SHA-256 is 44 characters, SHA-512 88).</summary>
public static class BlockHash
{
    /// <summary>The longest accepted hash text: 88 characters (66 bytes without padding; SHA-512 is 64 bytes with padding).</summary>
    public const int MaxLength = 88;

    /// <summary>Whether <paramref name="hash"/> is a valid hash text. Allocates nothing.</summary>
    /// <param name="hash">The text to check.</param>
    /// <returns><see langword="true"/> when valid.</returns>
    public static bool IsValid(string? hash)
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
            : throw new ArgumentException($"The hash '{Shorten(hash)}' does not decode to at most {into.Length} bytes.", nameof(hash));

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
                : $"The hash '{Shorten(hash)}' ({hash.Length} characters) is not canonical standard base64 with '=' padding of 1 to 66 bytes (A-Z, a-z, 0-9, '+', '/', length a multiple of 4, at most {MaxLength}, unused low bits of the last character zero; SHA-256 is 44 characters).",
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

    private static string Shorten(string s) => s.Length <= 96 ? s : string.Concat(s.AsSpan(0, 96), "…");
}
