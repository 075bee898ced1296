using BlockDb.Drivers;
using BlockDb.Sessions;
using BlockDb.Sql;
using BlockDb.Stores;
using Microsoft.Extensions.Logging;

namespace BlockDb.Layouts;

/// <summary>
/// One block layout (<see cref="BlockLayout"/>): its file format and the behaviour that goes with it. Everything a
/// layout does differently from the others is here or in the types it creates; the engine asks the definition and
/// never tests which layout it holds. The definitions are listed once, in <see cref="LayoutCatalog"/>.
/// </summary>
internal abstract class LayoutDefinition
{
    /// <summary>The layout this defines.</summary>
    public abstract BlockLayout Layout { get; }

    /// <summary>The <c>PRAGMA user_version</c> a new file of this layout gets, and older files are upgraded to.</summary>
    public virtual int SchemaVersion => SchemaVersions.Current;

    /// <summary>Whether <c>Block.Hash</c> holds the base64 text (else the decoded bytes as a BLOB).</summary>
    public abstract bool TextHashes { get; }

    /// <summary>The highest block ID the layout holds.</summary>
    public virtual long MaxBlockId => long.MaxValue;

    /// <summary>The <c>typeof()</c> name of a stored hash: <c>text</c> or <c>blob</c>.</summary>
    public string HashType => TextHashes ? "text" : "blob";

    /// <summary>Reads a stored hash back as base64 text.</summary>
    /// <exception cref="BlockDbFormatException">The stored value is not a hash this layout writes.</exception>
    public string ReadHash(ISqliteStatement statement, int column) =>
        TextHashes ? TextHashCodec.Read(statement, column) : BlobHashCodec.Read(statement, column);

    /// <summary>The longest stored hash: characters of base64 text, or bytes.</summary>
    public int MaxHashLength => TextHashes ? BlockHash.MaxLength : BlockHash.MaxBytes;

    /// <summary>The select-xor-insert strategies this layout can run (<see cref="BlockDbOptions.SelectXorInsert"/>; any other is refused).</summary>
    public virtual IReadOnlyList<SelectXorInsertStrategy> Strategies { get; } = Enum.GetValues<SelectXorInsertStrategy>();

    /// <summary>
    /// Why the layout allows no trigger that BlockDb did not create (a sentence part for a refusal's message), or
    /// <see langword="null"/> when it allows them.
    /// </summary>
    public virtual string? ForeignTriggersRefused => null;

    /// <summary>The DDL of a new file, in order (the settings row and the version pragmas are written by the schema code).</summary>
    public abstract IEnumerable<string> CreateSchema();

    /// <summary>What an existing file of this layout at <paramref name="version"/> needs before use (read inside a read transaction).</summary>
    /// <exception cref="BlockDbFormatException">The file holds something the layout cannot work with and BlockDb must not change.</exception>
    public virtual SchemaChange Inspect(ISqliteConnection connection, string path, long version) =>
        version < SchemaVersion ? SchemaChange.Upgrade : SchemaChange.None;

    /// <summary>
    /// Makes <paramref name="change"/> (inside the write transaction that found it needed). An upgrade adds what every
    /// layout gained since the file's version: the settings table naming the layout, and the volumes.
    /// </summary>
    public virtual void Apply(ISqliteConnection connection, SchemaChange change)
    {
        if (change != SchemaChange.Upgrade)
        {
            return;
        }

        connection.Execute(BlockDbSql.SettingsTableIfMissing);
        using (var write = connection.Prepare(BlockDbSql.WriteSettingIfMissing))
        {
            write.BindText(1, BlockDbSql.LayoutSetting);
            write.BindText(2, Layout.ToString());
            write.ExecuteNonQuery();
        }

        if (connection.QueryText(BlockDbSql.BlockHasVolumeColumn) == "0")
        {
            connection.Execute(BlockDbSql.AddBlockVolumeColumn);
        }

        foreach (var sql in BlockDbSql.VolumeTables)
        {
            connection.Execute(sql);
        }
    }

    /// <summary>Refuses settings this layout cannot honour (a setting is applied or refused, never ignored).</summary>
    /// <exception cref="BlockDbConfigurationException">A setting does not apply to this layout.</exception>
    public virtual void Validate(BlockDbOptions options)
    {
        if (!Strategies.Contains(options.SelectXorInsert))
        {
            throw new BlockDbConfigurationException(
                $"{BlockDbOptions.SectionName}:SelectXorInsert",
                $"BlockDb:SelectXorInsert is {options.SelectXorInsert}, which the {Layout} layout cannot use{StrategyReason}; allowed with {Layout}: {string.Join(", ", Strategies)}. Change the setting (or leave it unset), or use a layout that supports it.");
        }
    }

    /// <summary>Why the layout runs only <see cref="Strategies"/>, for the refusal's message (empty, or text starting with "; " or ": ").</summary>
    protected virtual string StrategyReason => string.Empty;

    /// <summary>The layout's state for one open database (the KeyMap layout's shared key map).</summary>
    /// <param name="options">The database's options.</param>
    /// <param name="connection">The opening connection (the schema checked), for settings the state reads once.</param>
    /// <param name="path">The database file's full path.</param>
    /// <param name="logger">Where the state logs.</param>
    public abstract LayoutState Open(BlockDbOptions options, ISqliteConnection connection, string path, ILogger logger);
}

/// <summary>What a file needs before it can be used.</summary>
internal enum SchemaChange
{
    /// <summary>Nothing: use it as it is.</summary>
    None,

    /// <summary>An empty file: create the schema.</summary>
    Create,

    /// <summary>An older schema version of the layout: upgrade it in place.</summary>
    Upgrade,

    /// <summary>Guards removed or changed by SQL outside BlockDb: re-create them.</summary>
    RestoreGuards,
}

/// <summary>A layout's state in one open database, shared by its sessions.</summary>
internal abstract class LayoutState
{
    /// <summary>The layout.</summary>
    public abstract LayoutDefinition Definition { get; }

    /// <summary>The key map's blocks and bytes, or (0, 0) for a layout without one.</summary>
    public virtual (long Blocks, long Bytes) MapUsage => (0, 0);

    /// <summary>Whether the layout keeps an in-memory key map (whose <see cref="MapUsage"/> the metrics report).</summary>
    public virtual bool HasMap => false;

    /// <summary>Where the layout's in-memory state reports its loads and failures (called once, when the database opens).</summary>
    public virtual void Report(KeyMap.MapLoadReporter reporter)
    {
    }

    /// <summary>A session's block store on <paramref name="connection"/>, writing through <paramref name="batch"/> and checking volumes with <paramref name="volumes"/>.</summary>
    public abstract IBlockStore CreateStore(ISqliteConnection connection, WriteBatch batch, VolumeGuard volumes, SelectXorInsertStrategy strategy);

    /// <summary>The check's layout-specific part: blocks an in-memory structure misses, and whether the file's guards are intact.</summary>
    public virtual (BlockDbFinding MapMissing, bool GuardsIntact) CheckLayout(ISqliteConnection connection, CancellationToken cancellationToken) =>
        (BlockDbFinding.None, true);

    /// <summary>The lowest ID a repair may give a renumbered block, beyond every row in range.</summary>
    public virtual long RenumberFloor(ISqliteConnection connection) => 0;

    /// <summary>Inside a repair's transaction: no later insert may take an ID up to <paramref name="maxId"/> (it may have been handed out before the repair deleted or moved its row).</summary>
    public virtual void SealIds(ISqliteConnection connection, long maxId)
    {
    }

    /// <summary>After a repair committed: forget what the file no longer matches.</summary>
    public virtual void AfterRepair()
    {
    }

    /// <summary>
    /// When the database is disposed, after every session (nothing changes the state any more): persist what the next
    /// open can use (the KeyMap layout's snapshot). Never throws. Not called for a read-only database.
    /// </summary>
    /// <param name="open">Opens a connection to the file with the pragmas applied, whose provider gives up on a lock after the given milliseconds (its own retries included).</param>
    public virtual void Close(Func<int, ISqliteConnection> open)
    {
    }
}
