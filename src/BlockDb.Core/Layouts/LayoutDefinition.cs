using BlockDb.Drivers;
using BlockDb.Layouts.Indexed;
using BlockDb.Sql;
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

    /// <summary>Reads a stored hash back as bytes.</summary>
    /// <exception cref="BlockDbFormatException">The stored value is not a hash this layout writes.</exception>
    public BlockHash ReadBinaryHash(ISqliteStatement statement, int column) =>
        TextHashes ? TextHashCodec.ReadBinary(statement, column) : BlobHashCodec.ReadBinary(statement, column);

    /// <summary>The longest stored hash: characters of base64 text, or bytes.</summary>
    public int MaxHashLength => TextHashes ? BlockHash.MaxLength : BlockHash.MaxBytes;

    /// <summary>The select-xor-insert strategies this layout can run (<see cref="BlockDbOptions.SelectXorInsert"/>; any other is refused).</summary>
    public virtual IReadOnlyList<SelectXorInsertStrategy> Strategies { get; } = Enum.GetValues<SelectXorInsertStrategy>();

    /// <summary>
    /// Why the layout allows no trigger that BlockDb did not create (a sentence part for a refusal's message), or
    /// <see langword="null"/> when it allows them.
    /// </summary>
    public virtual string? ForeignTriggersRefused => null;

    /// <summary>
    /// Why BlockDb never creates a file of this layout (a sentence for a refusal's message), or <see langword="null"/>
    /// when it does. Such a layout is made by another application and recognised by <see cref="Recognizes"/>.
    /// </summary>
    public virtual string? CreateRefused => null;

    /// <summary>Why <see cref="IBlockDatabase.RepairAsync"/> is refused on this layout, or <see langword="null"/>.</summary>
    public virtual string? RepairRefused => null;

    /// <summary>Why a conversion from or to this layout is refused, or <see langword="null"/>.</summary>
    public virtual string? ConversionRefused => null;

    /// <summary>
    /// Whether a SQLite file with no BlockDb header (<c>application_id</c> and <c>user_version</c> 0) and some schema
    /// objects is a file of this layout, made by another application (read inside the opening read transaction; writes
    /// nothing). Only layouts that BlockDb does not create (<see cref="CreateRefused"/>) recognise files.
    /// </summary>
    /// <exception cref="BlockDbFormatException">The file is of this layout but not one BlockDb can work on (the message says why).</exception>
    public virtual bool Recognizes(ISqliteConnection connection, string path) => false;

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
