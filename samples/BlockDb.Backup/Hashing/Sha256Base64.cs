using System.Security.Cryptography;

namespace BlockDb.Backup.Hashing;

/// <summary>SHA-256 as standard base64 with padding (44 characters), the hash text BlockDb stores.</summary>
internal static class Sha256Base64
{
    public static string Hash(ReadOnlySpan<byte> data)
    {
        Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
        SHA256.HashData(data, hash);
        return Convert.ToBase64String(hash);
    }

    /// <summary>SHA-256 of <paramref name="data"/> as a block hash (bytes, no base64 text).</summary>
    public static BlockHash Binary(ReadOnlySpan<byte> data)
    {
        Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
        SHA256.HashData(data, hash);
        return new BlockHash(hash);
    }

    /// <summary>Finishes <paramref name="incremental"/> (which is then reset for reuse) and returns its hash.</summary>
    public static string Finish(IncrementalHash incremental)
    {
        Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
        incremental.GetHashAndReset(hash);
        return Convert.ToBase64String(hash);
    }
}
