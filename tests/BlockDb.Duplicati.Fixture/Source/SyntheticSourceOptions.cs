namespace BlockDb.Duplicati.Fixture.Source;

/// <summary>
/// The shape of a synthetic backup source. File sizes are log-normal (median 32 KiB, σ 2.5 in ln, capped): many small
/// files of one short block and a long tail of large files that hold most full-size blocks. Some full-size blocks come
/// from a small pool of common contents (duplicate blocks across files), some files repeat an earlier file's content
/// (a blockset found by FullHash and Length), some are empty. Later versions modify, touch, delete, bring back and add
/// files; unmodified files are the unchanged files Duplicati skips.
/// </summary>
public sealed record SyntheticSourceOptions
{
    /// <summary>The seed of every choice (default 42).</summary>
    public int Seed { get; init; } = 42;

    /// <summary>Median file size in bytes (default 32 KiB).</summary>
    public double MedianFileBytes { get; init; } = 32 * 1024;

    /// <summary>σ of ln(file size) (default 2.5).</summary>
    public double Sigma { get; init; } = 2.5;

    /// <summary>The largest file in bytes (default 1 GiB).</summary>
    public long MaxFileBytes { get; init; } = 1L << 30;

    /// <summary>Share of empty files (default 0.01).</summary>
    public double EmptyFileShare { get; init; } = 0.01;

    /// <summary>Share of full-size blocks whose content comes from the common pool (default 0.02).</summary>
    public double CommonBlockShare { get; init; } = 0.02;

    /// <summary>Number of distinct common full-size block contents (default 1000).</summary>
    public int CommonBlockPool { get; init; } = 1000;

    /// <summary>Share of new files that repeat an earlier file's first content (default 0.02).</summary>
    public double DuplicateFileShare { get; init; } = 0.02;

    /// <summary>Share of entries that are symbolic links (default 0.002).</summary>
    public double SymlinkShare { get; init; } = 0.002;

    /// <summary>Files per folder (default 64).</summary>
    public int FilesPerFolder { get; init; } = 64;

    /// <summary>The source root, ending with a separator (default <c>/source/</c>).</summary>
    public string Root { get; init; } = "/source/";

    /// <summary>The first backup's time, UTC (default 2026-01-01).</summary>
    public DateTime FirstBackupUtc { get; init; } = new(2026, 1, 1, 2, 0, 0, DateTimeKind.Utc);

    /// <summary>Time between versions (default 1 day).</summary>
    public TimeSpan Interval { get; init; } = TimeSpan.FromDays(1);

    /// <summary>Per version: share of present files whose content changes (default 0.05).</summary>
    public double ModifyShare { get; init; } = 0.05;

    /// <summary>Per version: share of present files whose timestamp alone changes (default 0.02).</summary>
    public double TouchShare { get; init; } = 0.02;

    /// <summary>Per version: share of present files deleted (default 0.02).</summary>
    public double DeleteShare { get; init; } = 0.02;

    /// <summary>Per version: share of deleted files brought back with the content and time they had (default 0.5).</summary>
    public double ResurrectShare { get; init; } = 0.5;

    /// <summary>Per version: new files, as a share of the first version's files (default 0.03).</summary>
    public double NewShare { get; init; } = 0.03;
}
