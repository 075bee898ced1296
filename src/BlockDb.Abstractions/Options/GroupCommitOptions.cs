namespace BlockDb;

/// <summary>
/// How the shared session (<see cref="IBlockDatabase.OpenSharedSession"/>) gathers concurrent writers into
/// one transaction (group commit). A batch opens with the first queued write and closes when the queue runs
/// empty, when it holds <see cref="MaxBatchSize"/> writes, or when it is <see cref="MaxDelayMilliseconds"/> old;
/// every write in it is acknowledged (its task completes) only after the batch has committed.
/// </summary>
public sealed class GroupCommitOptions
{
    /// <summary>The most writes in one transaction. Default 4096; allowed 1 to 1,000,000.</summary>
    public int MaxBatchSize { get; set; } = 4096;

    /// <summary>The longest a batch stays open collecting writes, in milliseconds. Default 50; allowed 1 to 60,000.</summary>
    public int MaxDelayMilliseconds { get; set; } = 50;

    /// <summary>The most writes waiting for the writer; callers beyond it wait (back-pressure). Default 65,536; allowed 1 to 10,000,000.</summary>
    public int QueueCapacity { get; set; } = 65_536;

    /// <summary>The most reader connections (for find, list and get). Default 0: twice the processor count; allowed 0 to 1024.</summary>
    public int MaxReaders { get; set; }

    /// <summary>A copy of these options (changing one does not change the other).</summary>
    /// <returns>The copy.</returns>
    internal GroupCommitOptions Clone() => (GroupCommitOptions)MemberwiseClone();

    /// <summary>Checks the values.</summary>
    /// <exception cref="BlockDbConfigurationException">A value is out of range.</exception>
    internal void Validate()
    {
        OptionGuard.InRange(MaxBatchSize, 1, 1_000_000, "BlockDb:GroupCommit:MaxBatchSize", "writes");
        OptionGuard.InRange(MaxDelayMilliseconds, 1, 60_000, "BlockDb:GroupCommit:MaxDelayMilliseconds", "milliseconds");
        OptionGuard.InRange(QueueCapacity, 1, 10_000_000, "BlockDb:GroupCommit:QueueCapacity", "writes");
        OptionGuard.InRange(MaxReaders, 0, 1024, "BlockDb:GroupCommit:MaxReaders", "connections (0 = twice the processor count)");
    }
}
