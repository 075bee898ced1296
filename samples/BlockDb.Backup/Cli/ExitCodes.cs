namespace BlockDb.Backup.Cli;

/// <summary>The process exit codes.</summary>
internal static class ExitCodes
{
    public const int Success = 0;

    /// <summary>verify found a mismatch, compare a difference, check a problem, or problems remain after repair (System.CommandLine also uses 1 for a parse error).</summary>
    public const int Difference = 1;

    /// <summary>Invalid configuration or usage: bad provider, bad pragma value, missing file.</summary>
    public const int Configuration = 2;

    /// <summary>SQLite or I/O failed.</summary>
    public const int Failure = 3;

    /// <summary>
    /// The index refused the change as a conflict (<see cref="BlockDbConflictException"/>), nothing of it written: a source
    /// with duplicate blocks converted without --merge-duplicates, a volume state change that is not allowed.
    /// </summary>
    public const int Conflict = 4;

    /// <summary>Cancelled with Ctrl+C (128 + SIGINT).</summary>
    public const int Cancelled = 130;
}
