using System.Buffers.Binary;
using System.IO.Hashing;
using System.Security.Cryptography;

namespace BlockDb.KeyMap;

/// <summary>
/// The key of a block in a <see cref="KeyTable"/>: XXH3 (<see cref="XxHash3"/>) of the block's hash bytes keyed with a
/// secret 64-bit seed, with its size mixed in. The seed is stable for a file (kept in its <c>BlockDbSettings</c> and in its key-map
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

    /// <summary>
    /// The key of (<paramref name="hash"/>, <paramref name="size"/>): XXH3 of the hash bytes with the secret seed, the
    /// size folded in (times the 64-bit golden ratio), then one multiply-xorshift round so every bit of both reaches the
    /// 32 bits kept. Without the seed, nobody can tell which hashes or sizes share a key. Costs about half the
    /// per-process <see cref="HashCode"/> key it replaced (bench/BlockDb.Bench.Micro <c>keyof</c>), and hashing the size
    /// inside XXH3 instead (copying both into one buffer) cost 1.1x of it.
    /// </summary>
    public uint KeyOf(ReadOnlySpan<byte> hash, long size)
    {
        var h = XxHash3.HashToUInt64(hash, Seed) ^ ((ulong)size * 0x9E3779B97F4A7C15UL);
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9UL;
        return (uint)(h >> 32);
    }
}
