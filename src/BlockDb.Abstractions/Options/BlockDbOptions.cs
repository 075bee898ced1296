namespace BlockDb;

/// <summary>
/// Everything needed to open a block index: provider, file, pragmas, commit batching and the select-xor-insert
/// strategy. Binds from the <c>BlockDb</c> configuration section (<see cref="SectionName"/>).
/// </summary>
public sealed class BlockDbOptions
{
    /// <summary>The configuration section these options bind from: <c>BlockDb</c>.</summary>
    public const string SectionName = "BlockDb";

    /// <summary>The provider name: <c>MicrosoftData</c> (default), <c>SystemData</c> or <c>PInvoke</c>, case-insensitive.</summary>
    public string Provider { get; set; } = "MicrosoftData";

    /// <summary>The database file path. Its folder must exist; the file is created when missing. Required.</summary>
    public string? DataSource { get; set; }

    /// <summary>
    /// Opens the file read-only (<c>SQLITE_OPEN_READONLY</c>): for a restore, verify or reporting process beside a
    /// running backup. The file must exist with a schema this build reads as it is (a file that needs a schema
    /// upgrade is refused with <see cref="BlockDbFormatException"/>; open it once for writing). Every write call
    /// throws <see cref="BlockDbReadOnlyException"/> and nothing is written; <c>journal_mode</c> cannot be changed,
    /// so a requested journal mode other than the file's is refused with <see cref="BlockDbConfigurationException"/>.
    /// Opening never takes the write lock, read-only or not. Default <see langword="false"/>.
    /// </summary>
    public bool ReadOnly { get; set; }

    /// <summary>The pragmas applied and read back on every connection BlockDb opens.</summary>
    public PragmaOptions Pragmas { get; set; } = new();

    /// <summary>When writes are committed.</summary>
    public BatchingOptions Batching { get; set; } = new();

    /// <summary>How the shared repository groups concurrent writers into transactions.</summary>
    public GroupCommitOptions GroupCommit { get; set; } = new();

    /// <summary>The block index's layout (text or BLOB hashes, SQLite index or in-memory key map) and its memory limit.</summary>
    public IndexOptions Index { get; set; } = new();

    /// <summary>How <c>SelectXorInsertAsync</c> finds or creates a block. Default: <see cref="SelectXorInsertStrategy.SelectThenInsert"/>, as Duplicati does.</summary>
    public SelectXorInsertStrategy SelectXorInsert { get; set; } = SelectXorInsertStrategy.SelectThenInsert;

    /// <summary>Checks every value that does not depend on the provider catalog.</summary>
    /// <exception cref="BlockDbConfigurationException">A value is missing or out of range; the message says which and what is allowed.</exception>
    public void Validate()
    {
        if (string.IsNullOrWhiteSpace(Provider))
        {
            throw new BlockDbConfigurationException($"{SectionName}:Provider", "BlockDb:Provider is empty; set it to MicrosoftData, SystemData or PInvoke.");
        }

        if (string.IsNullOrWhiteSpace(DataSource))
        {
            throw new BlockDbConfigurationException($"{SectionName}:DataSource", "BlockDb:DataSource is empty; set it to the path of the database file (its folder must exist).");
        }

        if (DataSource.Contains('\0', StringComparison.Ordinal))
        {
            throw new BlockDbConfigurationException($"{SectionName}:DataSource", "BlockDb:DataSource contains a NUL character; give a plain file path.");
        }

        if (DataSource.Trim() == ":memory:" || DataSource.StartsWith("file:", StringComparison.OrdinalIgnoreCase))
        {
            throw new BlockDbConfigurationException($"{SectionName}:DataSource", $"BlockDb:DataSource '{DataSource}' is not a file path; BlockDb indexes live in files (URI and :memory: names are not accepted).");
        }

        OptionGuard.Defined(SelectXorInsert, $"{SectionName}:SelectXorInsert");
        (Pragmas ?? throw new BlockDbConfigurationException($"{SectionName}:Pragmas", "BlockDb:Pragmas is null.")).Validate();
        (Batching ?? throw new BlockDbConfigurationException($"{SectionName}:Batching", "BlockDb:Batching is null.")).Validate();
        (Index ?? throw new BlockDbConfigurationException($"{SectionName}:Index", "BlockDb:Index is null.")).Validate();
        (GroupCommit ?? throw new BlockDbConfigurationException($"{SectionName}:GroupCommit", "BlockDb:GroupCommit is null.")).Validate();
    }
}
