namespace BlockDb;

/// <summary>
/// Everything needed to open a block index: provider, file, pragmas, commit batching, group commit, the block layout
/// and the select-xor-insert strategy. Binds from the <c>BlockDb</c> configuration section (<see cref="SectionName"/>).
/// A database copies its options when it is built (<c>BlockDatabaseBuilder.Build</c>): changing this object
/// afterwards changes nothing.
/// </summary>
public sealed class BlockDbOptions
{
    /// <summary>The configuration section these options bind from: <c>BlockDb</c>.</summary>
    public const string SectionName = "BlockDb";

    /// <summary>
    /// The provider name, case-insensitive: <c>MicrosoftData</c>, <c>SystemData</c>, <c>PInvoke</c>, <c>PostgreSql</c>, or a provider
    /// registered by a package. <see langword="null"/> (default): the one provider registered with the builder or
    /// the service collection when there is exactly one, else <c>MicrosoftData</c>.
    /// </summary>
    public string? Provider { get; set; }

    /// <summary>The database file path (SQLite providers). Its folder must exist; the file is created when missing. Required by the SQLite providers; refused by a server provider.</summary>
    public string? DataSource { get; set; }

    /// <summary>
    /// The connection string of a database server (the <c>PostgreSql</c> provider: Npgsql's keywords, for example
    /// <c>Host=db.example;Port=5432;Database=backup;Username=blockdb;Password=...</c>, see
    /// <see href="https://www.npgsql.org/doc/connection-string-parameters.html"/>). Required by a server provider unless
    /// the application registers its own data source with dependency injection; refused by the SQLite providers, which
    /// take <see cref="DataSource"/>. Never logged nor returned by <see cref="IBlockDatabase.DataSource"/> (passwords).
    /// </summary>
    public string? ConnectionString { get; set; }

    /// <summary>
    /// Opens the file read-only (<c>SQLITE_OPEN_READONLY</c>), for a restore or verify beside a running backup: every
    /// write throws <see cref="BlockDbReadOnlyException"/>. The file must exist and need no schema upgrade
    /// (<see cref="BlockDbFormatException"/>), and a journal mode other than the file's is refused
    /// (<see cref="BlockDbConfigurationException"/>). Default <see langword="false"/>.
    /// </summary>
    public bool ReadOnly { get; set; }

    /// <summary>The pragmas applied and read back on every connection BlockDb opens.</summary>
    public PragmaOptions Pragmas { get; set; } = new();

    /// <summary>When writes are committed.</summary>
    public BatchingOptions Batching { get; set; } = new();

    /// <summary>How the shared session groups concurrent writers into transactions.</summary>
    public GroupCommitOptions GroupCommit { get; set; } = new();

    /// <summary>The block index's layout (text or BLOB hashes, SQLite index or in-memory key map) and its memory limit.</summary>
    public IndexOptions Index { get; set; } = new();

    /// <summary>
    /// How select-xor-insert finds or creates a block on the layouts with a hash index. Default
    /// <see cref="SelectXorInsertStrategy.SelectThenInsert"/>, Duplicati's way and the only one the
    /// <see cref="BlockLayout.KeyMap"/> and <see cref="BlockLayout.Duplicati"/> layouts run (the others are refused at build).
    /// </summary>
    public SelectXorInsertStrategy SelectXorInsert { get; set; } = SelectXorInsertStrategy.SelectThenInsert;

    /// <summary>A deep copy of these options (changing one does not change the other).</summary>
    /// <returns>The copy.</returns>
    public BlockDbOptions Clone() => new()
    {
        Provider = Provider,
        DataSource = DataSource,
        ConnectionString = ConnectionString,
        ReadOnly = ReadOnly,
        Pragmas = Pragmas?.Clone()!,
        Batching = Batching?.Clone()!,
        GroupCommit = GroupCommit?.Clone()!,
        Index = Index?.Clone()!,
        SelectXorInsert = SelectXorInsert,
    };

    /// <summary>
    /// Checks every value that does not depend on the provider (each provider checks its own settings, such as
    /// <see cref="DataSource"/> for the SQLite providers, when the database is built).
    /// </summary>
    /// <exception cref="BlockDbConfigurationException">A value is missing or out of range; the message says which and what is allowed.</exception>
    public void Validate()
    {
        if (Provider is not null && string.IsNullOrWhiteSpace(Provider))
        {
            throw new BlockDbConfigurationException($"{SectionName}:Provider", "BlockDb:Provider is empty; leave it unset or name a provider: MicrosoftData, SystemData, PInvoke or PostgreSql.");
        }

        OptionGuard.Defined(SelectXorInsert, $"{SectionName}:SelectXorInsert");
        (Pragmas ?? throw new BlockDbConfigurationException($"{SectionName}:Pragmas", "BlockDb:Pragmas is null.")).Validate();
        (Batching ?? throw new BlockDbConfigurationException($"{SectionName}:Batching", "BlockDb:Batching is null.")).Validate();
        (Index ?? throw new BlockDbConfigurationException($"{SectionName}:Index", "BlockDb:Index is null.")).Validate();
        (GroupCommit ?? throw new BlockDbConfigurationException($"{SectionName}:GroupCommit", "BlockDb:GroupCommit is null.")).Validate();
    }
}
