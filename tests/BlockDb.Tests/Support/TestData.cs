using System.Security.Cryptography;

namespace BlockDb.Tests.Support;

internal static class TestData
{
    /// <summary>A real SHA-256 hash as 44-character base64, distinct per <paramref name="seed"/>.</summary>
    public static string Hash(int seed) => Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(seed)));

    /// <summary>The same hash as <see cref="Hash"/>, as bytes.</summary>
    public static BlockHash Bytes(int seed) => new(SHA256.HashData(BitConverter.GetBytes(seed)));

    /// <summary>The block of hash <see cref="Bytes"/>(<paramref name="seed"/>) and <paramref name="size"/> bytes.</summary>
    public static BlockKey Block(int seed, long size = 102_400) => new(Bytes(seed), size);
}
