using System.Buffers.Binary;
using System.IO.Hashing;
using System.Security.Cryptography;
using BlockDb.Stores;

namespace BlockDb.KeyMap;

/// <summary>
/// The key of a block in a <see cref="KeyTable"/>: XXH3 (<see cref="XxHash3"/>) of the block's hash bytes and its size,
/// keyed with a secret 64-bit seed. The seed is stable for a file (kept in its <c>BlockDbSettings</c> and in its key-map
/// snapshot, so a map's slots can be written to disk and used by another process) and random per file, so a caller who
/// chooses block hashes cannot choose keys that collide (hash flooding): hashes sharing a prefix, or one hash at many
/// sizes, spread like any others.
/// </summary>
/// <param name="seed">The secret seed (not a record: its text form must not print the seed into a log).</param>
internal readonly struct KeyHasher(long seed)
{
    /// <summary>The secret seed.</summary>
    public long Seed { get; } = seed;

    /// <summary>A hasher with a fresh random seed (a file that has none recorded yet).</summary>
    public static KeyHasher Random() => new(BinaryPrimitives.ReadInt64LittleEndian(RandomNumberGenerator.GetBytes(sizeof(long))));

    /// <summary>The key of (<paramref name="hash"/>, <paramref name="size"/>): both hashed in one pass, the 64-bit result folded to 32 bits.</summary>
    public uint KeyOf(ReadOnlySpan<byte> hash, long size)
    {
        Span<byte> input = stackalloc byte[BlockHash.MaxBytes + sizeof(long)];
        var length = Math.Min(hash.Length, BlockHash.MaxBytes);
        hash[..length].CopyTo(input);
        BinaryPrimitives.WriteInt64LittleEndian(input[length..], size);
        var h = XxHash3.HashToUInt64(input[..(length + sizeof(long))], Seed);
        return (uint)(h ^ (h >> 32));
    }
}
