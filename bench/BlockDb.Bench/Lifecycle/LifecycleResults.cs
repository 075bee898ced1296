namespace BlockDb.Bench.Lifecycle;

/// <summary>One delete-and-collect run: a fresh copy of a layout's template, one provider.</summary>
internal sealed record DeleteRun(
    int Repetition,
    int Order,
    BlockLayout Layout,
    string Provider,
    string SqliteVersion,
    double LoadAverage,
    double FirstLookupSeconds,
    long BlocksetsDeleted,
    double DeleteSeconds,
    long BlocksCollected,
    long BytesCollected,
    double CollectSeconds,
    double VerifySeconds,
    bool CheckClean,
    string? Error)
{
    /// <summary>µs per deleted blockset (its deletes and their commits).</summary>
    public double MicrosPerBlockset => DeleteSeconds * 1e6 / Math.Max(1, BlocksetsDeleted);

    /// <summary>µs per collected block (the collection and its commit).</summary>
    public double MicrosPerBlock => CollectSeconds * 1e6 / Math.Max(1, BlocksCollected);

    /// <summary>Both phases, µs per deleted blockset.</summary>
    public double TotalMicrosPerBlockset => (DeleteSeconds + CollectSeconds) * 1e6 / Math.Max(1, BlocksetsDeleted);
}

/// <summary>One conversion run: a fresh copy of the TextHash file converted to one layout with one provider.</summary>
internal sealed record ConvertRun(
    int Repetition,
    int Order,
    BlockLayout Target,
    string Provider,
    double LoadAverage,
    long Blocks,
    long Blocksets,
    long Entries,
    long Volumes,
    double CopySeconds,
    double TotalSeconds,
    long TargetBytes,
    bool CheckClean,
    string? Error)
{
    /// <summary>Blocks per second, the conversion's own check included (what <c>ConvertAsync</c> takes).</summary>
    public double BlocksPerSecond => Blocks / Math.Max(1e-9, TotalSeconds);

    /// <summary>Blocks per second of the copy alone (until the last entry is copied; the check excluded).</summary>
    public double CopyBlocksPerSecond => Blocks / Math.Max(1e-9, CopySeconds);
}
