namespace BlockDb.Bench.Model;

/// <summary>Names, the definition of one operation, and traits of each <see cref="Workload"/>.</summary>
public static class WorkloadInfo
{
    /// <summary>Every workload in display order.</summary>
    public static IReadOnlyList<Workload> All { get; } = Enum.GetValues<Workload>();

    /// <summary>The command-line and file name.</summary>
    /// <param name="workload">The workload.</param>
    /// <returns>The name, for example <c>xor-select-insert</c>.</returns>
    public static string Name(Workload workload) => workload switch
    {
        Workload.Select => "select",
        Workload.Insert => "insert",
        Workload.XorSelectInsert => "xor-select-insert",
        Workload.XorIgnoreSelect => "xor-ignore-select",
        Workload.XorReturning => "xor-returning",
        Workload.Join => "join",
        Workload.NewBlockset => "new-blockset",
        Workload.Replay => "replay",
        Workload.XorHit => "xor-hit",
        Workload.Import => "import",
        _ => throw new ArgumentOutOfRangeException(nameof(workload), workload, null),
    };

    /// <summary>The workloads the sweep can run: all but <see cref="Workload.Import"/> (<c>bench limit</c> only: it needs an empty file).</summary>
    public static IReadOnlyList<Workload> Sweep { get; } = [.. All.Where(w => w != Workload.Import)];

    /// <summary>The workloads run when <c>--workloads</c> is not given: all but replay (needs a recording) and xor-hit (name it).</summary>
    /// <param name="replay">Whether a replay stream was given.</param>
    /// <returns>The workloads.</returns>
    public static IReadOnlyList<Workload> Defaults(bool replay) => [.. Sweep.Where(w => w != Workload.XorHit && (w != Workload.Replay || replay))];

    /// <summary>
    /// The import's check: after the timed region every n-th imported block is found again (the oracle's digest is
    /// their IDs), at most about 4,096 lookups a run.
    /// </summary>
    /// <param name="blocks">Blocks imported.</param>
    /// <returns>n, at least 1.</returns>
    public static int ImportCheckStride(int blocks) => Math.Max(1, blocks / 4096);

    /// <summary>What one operation (op) is: the unit of ops/s.</summary>
    /// <param name="workload">The workload.</param>
    /// <returns>A short definition.</returns>
    public static string OpDefinition(Workload workload) => workload switch
    {
        Workload.Select => "FindBlockAsync of an existing block (hit)",
        Workload.Insert => "SelectXorInsertAsync of a new block (no insert-only call in the public API)",
        Workload.XorSelectInsert => "SelectXorInsertAsync, SelectThenInsert (seed xor1)",
        Workload.XorIgnoreSelect => "SelectXorInsertAsync, InsertOrIgnoreThenSelect (seed xor2)",
        Workload.XorReturning => "SelectXorInsertAsync, InsertReturningThenSelect",
        Workload.Join => "ListBlocksetBlocksAsync of an existing blockset, into a reused buffer",
        Workload.NewBlockset => "one blockset of k blocks: k x SelectXorInsertAsync + AddBlocksetAsync(ids)",
        Workload.Replay => "one recorded block: SelectXorInsertAsync; AddBlocksetAsync(ids) at each file end",
        Workload.XorHit => "SelectXorInsertAsync of an existing block (always a hit)",
        Workload.Import => "one block of ImportBlocksAsync into an empty KeyMap file",
        _ => throw new ArgumentOutOfRangeException(nameof(workload), workload, null),
    };

    /// <summary>The secondary unit reported beside ops/s, or <see langword="null"/>.</summary>
    /// <param name="workload">The workload.</param>
    /// <returns><c>blocks</c>, <c>rows</c>, <c>files</c> or <see langword="null"/>.</returns>
    public static string? SecondaryUnit(Workload workload) => workload switch
    {
        Workload.NewBlockset => "blocks",
        Workload.Join => "rows",
        Workload.Replay => "files",
        _ => null,
    };

    /// <summary>Whether the workload writes (so commit batching applies).</summary>
    /// <param name="workload">The workload.</param>
    /// <returns><see langword="true"/> for writers.</returns>
    public static bool Writes(Workload workload) => workload is not (Workload.Select or Workload.Join);

    /// <summary>Whether a layout can run the workload (KeyMap runs select-then-insert only; BlockDb refuses the other strategies with it).</summary>
    /// <param name="workload">The workload.</param>
    /// <param name="layout">The layout.</param>
    /// <returns><see langword="true"/> when it can.</returns>
    public static bool RunsOn(Workload workload, BlockLayout layout) =>
        layout == BlockLayout.KeyMap ? workload is not (Workload.XorIgnoreSelect or Workload.XorReturning) : workload != Workload.Import;

    /// <summary>Whether one op is a group of blocks (a blockset or a file).</summary>
    /// <param name="workload">The workload.</param>
    /// <returns><see langword="true"/> for grouped workloads.</returns>
    public static bool Grouped(Workload workload) => workload is Workload.NewBlockset or Workload.Replay;

    /// <summary>The select-xor-insert strategy a workload runs with.</summary>
    /// <param name="workload">The workload.</param>
    /// <returns>The strategy (SelectThenInsert for workloads that are not an xor variant).</returns>
    public static SelectXorInsertStrategy Strategy(Workload workload) => workload switch
    {
        Workload.XorIgnoreSelect => SelectXorInsertStrategy.InsertOrIgnoreThenSelect,
        Workload.XorReturning => SelectXorInsertStrategy.InsertReturningThenSelect,
        _ => SelectXorInsertStrategy.SelectThenInsert,
    };

    /// <summary>Whether the workload has a sync and a driver-level loop (the api study).</summary>
    /// <param name="workload">The workload.</param>
    /// <returns><see langword="true"/> for select, insert and xor-select-insert.</returns>
    public static bool HasAllApiPaths(Workload workload) => workload is Workload.Select or Workload.Insert or Workload.XorSelectInsert;

    /// <summary>Parses a name or alias (<c>xor1</c>, <c>xor2</c>, <c>xor</c> = all three xor variants).</summary>
    /// <param name="text">The name.</param>
    /// <returns>The workloads it names.</returns>
    /// <exception cref="ArgumentException">Unknown name.</exception>
    public static IEnumerable<Workload> Parse(string text)
    {
        var t = text.Trim().ToLowerInvariant();
        if (t is "xor")
        {
            return [Workload.XorSelectInsert, Workload.XorIgnoreSelect, Workload.XorReturning];
        }

        if (t is "all")
        {
            return Sweep;
        }

        Workload? alias = t switch
        {
            "xor1" => Workload.XorSelectInsert,
            "xor2" => Workload.XorIgnoreSelect,
            "xor3" => Workload.XorReturning,
            "blockset" => Workload.NewBlockset,
            "hit" => Workload.XorHit,
            _ => null,
        };
        if (alias is { } a)
        {
            return [a];
        }

        foreach (var w in All)
        {
            if (Name(w) == t)
            {
                return [w];
            }
        }

        throw new ArgumentException($"Unknown workload '{text}'; valid: {string.Join(", ", All.Select(Name))}, xor (all three), xor1, xor2, xor3, hit (xor-hit), all.");
    }
}
