using System.Security.Cryptography;
using System.Text;

namespace BlockDb.Stress;

/// <summary>
/// The blocks every stress process draws from, so workers and the foreign writer overlap: key i is
/// SHA-256("stress block i") at 4096 + i % 5 bytes. Workers mostly use the first <see cref="Hot"/> keys (found again
/// and again) and sometimes any key (new blocks all run long); the foreign writer inserts keys nobody has stored yet.
/// </summary>
public static class StressKeys
{
    /// <summary>Blocks in the pool.</summary>
    public const int Count = 20_000;

    /// <summary>The keys workers draw most of their blocks from.</summary>
    public const int Hot = 2_000;

    private static readonly BlockKey[] Keys = [.. Enumerable.Range(0, Count).Select(i =>
        new BlockKey(new BlockHash(SHA256.HashData(Encoding.UTF8.GetBytes($"stress block {i}"))), 4096 + (i % 5)))];

    public static BlockKey Get(int i) => Keys[i];

    /// <summary>A file of 1 to 6 blocks from the pool, repeats allowed.</summary>
    public static BlockKey[] File(Random random) => [.. Enumerable.Range(0, 1 + random.Next(6)).Select(_ => Keys[random.Next(random.Next(10) < 8 ? Hot : Count)])];

    /// <summary>Keys the foreign writer may insert (every fourth).</summary>
    public static BlockKey Foreign(Random random) => Keys[random.Next(Count / 4) * 4];

    public static string Format(BlockKey key) => key.ToString();

    public static BlockKey Parse(string text)
    {
        var colon = text.LastIndexOf(':');
        return BlockKey.Parse(text[..colon], long.Parse(text[(colon + 1)..], System.Globalization.CultureInfo.InvariantCulture));
    }
}
