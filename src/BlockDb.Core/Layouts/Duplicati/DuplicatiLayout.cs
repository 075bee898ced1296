using BlockDb.Blocksets;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Sessions;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;
using Microsoft.Extensions.Logging;

namespace BlockDb.Layouts.Duplicati;

/// <summary>
/// <see cref="BlockLayout.Duplicati"/>: a Duplicati local database (schema 19), recognised by its own shape
/// (<see cref="DuplicatiFile"/>) and worked on in place. BlockDb keeps nothing in the file [DQ4]: the layout is recognised at
/// every open, and the block size and hashes are read from Duplicati's <c>Configuration</c> into memory. Sessions run
/// Duplicati's rules on Duplicati's tables: the hot path is <see cref="DuplicatiSession"/>, the shared services run this
/// layout's statements (<see cref="BlockDbSql.DuplicatiSession"/>) and blockset rules (<see cref="DuplicatiBlocksetRules"/>).
/// BlockDb never creates, converts or repairs such a file.
/// </summary>
internal sealed class DuplicatiLayout : LayoutDefinition
{
    private DuplicatiLayout()
    {
    }

    public static DuplicatiLayout Instance { get; } = new();

    public override BlockLayout Layout => BlockLayout.Duplicati;

    /// <summary>Duplicati's own version (its <c>Version</c> table); the header's <c>user_version</c> stays 0.</summary>
    public override int SchemaVersion => DuplicatiFile.SupportedVersion;

    public override bool TextHashes => true;

    /// <summary>Duplicati's order is find, take back from <c>DeletedBlock</c>, then insert: an insert first would skip the take-back.</summary>
    public override IReadOnlyList<SelectXorInsertStrategy> Strategies { get; } = [SelectXorInsertStrategy.SelectThenInsert];

    protected override string StrategyReason => ": Duplicati finds a block, then takes it back from DeletedBlock, then inserts it, and an insert first would skip the take-back";

    public override string? CreateRefused => "BlockDb does not create Duplicati databases; Duplicati creates them from its Schema.sql (run a Duplicati backup once, then open its database with BlockDb), and BlockDb works on them in place";

    public override string? RepairRefused => "BlockDb does not repair a Duplicati database: its repair renumbers block IDs that Duplicati's DuplicateBlock and IndexBlockLink rows point at. Use Duplicati's own 'repair' command";

    public override string? ConversionRefused => "a Duplicati database is worked on in place, never converted: a conversion changes Block.Hash's type and with it every Duplicati query, and writes a new file Duplicati does not know";

    /// <summary>Duplicati's own rule and shape (<see cref="DuplicatiFile.Recognize"/>).</summary>
    public override bool Recognizes(ISqliteConnection connection, string path) => DuplicatiFile.Recognize(connection, path) is not null;

    public override IEnumerable<string> CreateSchema() => throw new NotSupportedException(CreateRefused);

    /// <summary>Recognition already checked the file; nothing in it is ever changed.</summary>
    public override SchemaChange Inspect(ISqliteConnection connection, string path, long version) => SchemaChange.None;

    public override void Apply(ISqliteConnection connection, SchemaChange change) =>
        throw new InvalidOperationException($"BlockDb changes no schema of a Duplicati database (asked for {change}).");

    /// <summary>Also refuses a journal mode other than WAL: it persists in the file, and Duplicati sets WAL (facts §4.9).</summary>
    public override void Validate(BlockDbOptions options)
    {
        base.Validate(options);
        if (Sqlite.Pragmas.Resolve(options.Pragmas).JournalMode is { } journal && journal != JournalMode.Wal)
        {
            throw new BlockDbConfigurationException(
                $"{BlockDbOptions.SectionName}:Pragmas:JournalMode",
                $"BlockDb:Pragmas:JournalMode resolves to {journal}, which would change a Duplicati database's journal mode (it persists in the file); Duplicati keeps its files in WAL. Allowed with the Duplicati layout: Wal, or leave the file's mode as it is (Preset None and no JournalMode).");
        }
    }

    /// <summary>Reads the file again (in a read transaction of the opening connection, or the caller's transaction) and keeps what it found in memory.</summary>
    public override LayoutState Open(BlockDbOptions options, ISqliteConnection connection, string path, ILogger logger)
    {
        // On a caller's connection (External mode) the caller's transaction is the read transaction: BlockDb begins none [X1].
        var file = (connection.InTransaction
                ? DuplicatiFile.Recognize(connection, path)
                : Transactions.Run(connection, BlockDbSql.BeginRead, () => DuplicatiFile.Recognize(connection, path)))
            ?? throw new BlockDbFormatException($"{Quoted.Path(path)} is no longer a Duplicati local database (its Version table is gone); nothing was changed.");
        if (!file.Indexes.Contains(DuplicatiFile.DeletedBlockHashSize))
        {
            Log.DuplicatiIndexMissing(logger, path, DuplicatiFile.DeletedBlockHashSize);
        }

        return new State(this, file);
    }

    /// <summary>The layout's state in one open database: the file's facts, read once at open.</summary>
    private sealed class State(DuplicatiLayout definition, DuplicatiFile file) : LayoutState
    {
        public override LayoutDefinition Definition => definition;

        /// <summary>What BlockDb read of the file when it opened it.</summary>
        public DuplicatiFile File => file;

        /// <summary>Duplicati's consistency rules (<see cref="DuplicatiRules"/>).</summary>
        public override IReadOnlyList<BlockDbRuleFinding> CheckRules(ISqliteConnection connection, CancellationToken cancellationToken) =>
            DuplicatiRules.Check(connection, file, cancellationToken);

        public override SessionSql Sql => BlockDbSql.DuplicatiSession;

        public override IBlocksetRules? BlocksetRules(SqliteServices services) => new DuplicatiBlocksetRules(services.Connection, file);

        public override ISessionHandle OpenSession(SqliteServices services) => services.Open(new DuplicatiSession(services, file));

        /// <summary>Every block by <see cref="DuplicatiSession.RequireNew(DuplicatiFile, in BlockKey, long?)"/>, before the first is looked up.</summary>
        public override void RequireNewBlocks(ReadOnlySpan<BlockKey> blocks, long? volumeId)
        {
            foreach (ref readonly var block in blocks)
            {
                DuplicatiSession.RequireNew(file, block, volumeId);
            }
        }
    }
}
