namespace BlockDb.Bench.Seed;

/// <summary>One block of the seed's data: its 1-based ID in the pre-filled file, its 44-character hash and its size.</summary>
internal readonly record struct SeedEntry(long Id, string Hash, long Size);

/// <summary>A pre-filled blockset: its 1-based ID, its block count and the sum of its blocks' sizes.</summary>
internal readonly record struct SeedBlockset(long Id, long Count, long Size);

/// <summary>
/// The seed's data as its blog post describes it (seed 000, "Benchmarks"): random 44-character alphanumeric hashes
/// (valid canonical base64 of 33 bytes, so BlockDb's text calls take them as they are), sizes 1 to 999, every
/// pre-filled block in one blockset, a new blockset started after a block with probability 0.05 (about 20 blocks
/// each). One seeded stream: both sides of a pair get the same keys.
/// </summary>
internal sealed class SeedData
{
    private const string Alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    public SeedData(int rows, int seed)
    {
        var random = new Random(seed);
        Entries = new SeedEntry[rows];
        var blocksets = new List<SeedBlockset>();
        long count = 0, size = 0;
        for (var i = 0; i < rows; i++)
        {
            Entries[i] = new SeedEntry(i + 1, NewHash(random), random.Next(1, 1000));
            count++;
            size += Entries[i].Size;
            if (random.NextDouble() < 0.05 || i == rows - 1)
            {
                blocksets.Add(new SeedBlockset(blocksets.Count + 1, count, size));
                count = size = 0;
            }
        }

        Blocksets = [.. blocksets];
    }

    /// <summary>The pre-filled blocks; entry i has ID i + 1.</summary>
    public SeedEntry[] Entries { get; }

    /// <summary>The pre-filled blocksets in ID order; their blocks are consecutive entries.</summary>
    public SeedBlockset[] Blocksets { get; }

    /// <summary>A random hash as the seed makes one.</summary>
    public static string NewHash(Random random)
    {
        Span<char> text = stackalloc char[44];
        for (var i = 0; i < text.Length; i++)
        {
            text[i] = Alphabet[random.Next(Alphabet.Length)];
        }

        return new string(text);
    }

    /// <summary>
    /// A workload's input: <paramref name="ops"/> blocks, each a random pre-filled one with probability
    /// <paramref name="existing"/>, else a new one whose ID continues from <paramref name="nextId"/> (the ID both sides give it).
    /// </summary>
    public SeedEntry[] Mixed(Random random, int ops, double existing, ref long nextId)
    {
        var list = new SeedEntry[ops];
        for (var i = 0; i < ops; i++)
        {
            list[i] = random.NextDouble() < existing
                ? Entries[random.Next(Entries.Length)]
                : new SeedEntry(nextId++, NewHash(random), random.Next(1, 1000));
        }

        return list;
    }

    /// <summary>Random pre-filled blocksets until their blocks reach <paramref name="blocks"/> (the seed's join input).</summary>
    public SeedBlockset[] JoinInput(Random random, int blocks)
    {
        var list = new List<SeedBlockset>();
        for (long total = 0; total < blocks;)
        {
            var b = Blocksets[random.Next(Blocksets.Length)];
            list.Add(b);
            total += b.Count;
        }

        return [.. list];
    }

    /// <summary>Where the new-blockset workload starts a new blockset: after entry i when true (never after the last).</summary>
    public static bool[] Breaks(Random random, int ops)
    {
        var breaks = new bool[ops];
        for (var i = 0; i < ops - 1; i++)
        {
            breaks[i] = random.NextDouble() < 0.05;
        }

        return breaks;
    }
}
