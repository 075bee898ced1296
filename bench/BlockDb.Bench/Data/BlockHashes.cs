using System.Buffers.Binary;
using System.Security.Cryptography;

namespace BlockDb.Bench.Data;

/// <summary>Which family of generated content a hash belongs to; families never collide.</summary>
public enum HashDomain
{
    /// <summary>Blocks of the pre-filled database.</summary>
    Prefill = 1,

    /// <summary>New blocks of a timed stream.</summary>
    Stream = 2,

    /// <summary>New blocks of a warm-up stream.</summary>
    Warmup = 3,

    /// <summary>Whole-file hashes of blocksets.</summary>
    FullHash = 4,
}

/// <summary>
/// Real SHA-256 hashes, as 44-character standard base64, of seeded content: the 24-byte record
/// (magic, seed, domain, index). Hashing a short record instead of 100 KiB of content gives the same
/// uniformly distributed hash strings at a ten-thousandth of the cost.
/// </summary>
public static class BlockHashes
{
    private const uint Magic = 0x42446248; // "BDbH"

    /// <summary>The hash of item <paramref name="index"/> of a domain.</summary>
    /// <param name="seed">The data seed.</param>
    /// <param name="domain">The family.</param>
    /// <param name="index">The item index.</param>
    /// <returns>44 characters of base64 with one '=' of padding.</returns>
    public static string Of(int seed, HashDomain domain, long index) => Binary(seed, domain, index).ToString();

    /// <summary>The hash of item <paramref name="index"/> of a domain, as its 32 bytes (the bulk import's form).</summary>
    /// <param name="seed">The data seed.</param>
    /// <param name="domain">The family.</param>
    /// <param name="index">The item index.</param>
    /// <returns>The SHA-256 whose base64 is <see cref="Of"/>.</returns>
    public static BlockHash Binary(int seed, HashDomain domain, long index)
    {
        Span<byte> content = stackalloc byte[24];
        BinaryPrimitives.WriteUInt32LittleEndian(content, Magic);
        BinaryPrimitives.WriteInt32LittleEndian(content[4..], seed);
        BinaryPrimitives.WriteInt32LittleEndian(content[8..], (int)domain);
        BinaryPrimitives.WriteInt32LittleEndian(content[12..], 0);
        BinaryPrimitives.WriteInt64LittleEndian(content[16..], index);
        Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
        SHA256.HashData(content, hash);
        return new BlockHash(hash);
    }
}
