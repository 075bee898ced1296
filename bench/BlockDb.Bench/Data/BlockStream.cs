namespace BlockDb.Bench.Data;

/// <summary>
/// The input of one phase (warm-up or timed) of a run, identical for every provider: a sequence of blocks
/// (hash, size, and the pre-filled block it repeats, if any), optionally grouped into blocksets/files, or a
/// list of blockset IDs for the join.
/// </summary>
public sealed class BlockStream
{
    /// <summary>Block hashes.</summary>
    public required string[] Hashes { get; init; }

    /// <summary>Block sizes.</summary>
    public required long[] Sizes { get; init; }

    /// <summary>The pre-filled block each item repeats (0-based), or −1 when it is not a pre-filled block.</summary>
    public required int[] PrefillIndex { get; init; }

    /// <summary>For grouped streams, the first item of each group plus the end; otherwise <see langword="null"/>.</summary>
    public int[]? GroupStarts { get; init; }

    /// <summary>For grouped streams, each group's whole-file hash (or <see langword="null"/>).</summary>
    public string?[]? GroupFullHashes { get; init; }

    /// <summary>For the join, the blockset IDs to list; otherwise <see langword="null"/>.</summary>
    public long[]? BlocksetIds { get; init; }

    /// <summary>How many slicing units (groups, blockset IDs or items) the stream has; threads split on these.</summary>
    public int Units => BlocksetIds?.Length ?? (GroupStarts is { } g ? g.Length - 1 : Hashes.Length);

    /// <summary>An empty stream.</summary>
    public static BlockStream Empty { get; } = new() { Hashes = [], Sizes = [], PrefillIndex = [] };

    /// <summary>The units of slice <paramref name="slice"/> of <paramref name="slices"/> (the C baseline splits the same way).</summary>
    /// <param name="slice">0-based slice.</param>
    /// <param name="slices">Slice count.</param>
    /// <returns>The unit range [Start, End).</returns>
    public (int Start, int End) Slice(int slice, int slices) => SliceOf(Units, slice, slices);

    /// <summary>Splits <paramref name="units"/> into contiguous, nearly equal slices.</summary>
    /// <param name="units">Total units.</param>
    /// <param name="slice">0-based slice.</param>
    /// <param name="slices">Slice count.</param>
    /// <returns>The range [Start, End).</returns>
    public static (int Start, int End) SliceOf(int units, int slice, int slices) =>
        ((int)((long)units * slice / slices), (int)((long)units * (slice + 1) / slices));

    /// <summary>The items of units [start, end): the groups' items for grouped streams, else the same range.</summary>
    /// <param name="start">First unit.</param>
    /// <param name="end">End unit.</param>
    /// <returns>The item range.</returns>
    public (int Start, int End) Items(int start, int end) =>
        GroupStarts is { } g ? (g[start], g[end]) : (start, end);
}

/// <summary>The warm-up and timed input of one workload configuration.</summary>
/// <param name="Warmup">Untimed operations first.</param>
/// <param name="Timed">The measured operations.</param>
public sealed record WorkloadData(BlockStream Warmup, BlockStream Timed);
