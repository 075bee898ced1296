using System.Globalization;
using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Layouts;
using BlockDb.Sql;
using BlockDb.Sqlite;
using Microsoft.Extensions.Logging;

namespace BlockDb.KeyMap;

/// <summary>
/// <see cref="BlockLayout.KeyMap"/>: BLOB hashes, no hash index, an in-memory key map per open database, and guards in
/// the file (the <c>BlockDbState</c> row and its triggers) that make any writer keep the map's invariants. KeyMap files
/// of version 2 (no guards) and 3 (weaker guards) get the guards of version 4 when they are upgraded.
/// </summary>
internal sealed class KeyMapLayout : LayoutDefinition
{
    /// <summary>The highest block ID the layout holds: 4,294,967,295 (2^32 − 1; the map stores 32-bit IDs).</summary>
    public const long MaxId = uint.MaxValue;

    private KeyMapLayout()
    {
    }

    public static KeyMapLayout Instance { get; } = new();

    public override BlockLayout Layout => BlockLayout.KeyMap;

    public override bool TextHashes => false;

    public override long MaxBlockId => MaxId;

    public override string? ForeignTriggersRefused => KeyMapTriggers.Reason;

    public override IEnumerable<string> CreateSchema() => [BlockDbSql.BlockTable("BLOB"), .. BlockDbSql.BlocksetTables, .. BlockDbSql.VolumeTables, .. BlockDbSql.KeyMapGuards];

    public override SchemaChange Inspect(ISqliteConnection connection, string path, long version)
    {
        var triggers = KeyMapTriggers.Read(connection);
        if (triggers.Foreign.Count > 0)
        {
            throw new BlockDbFormatException(triggers.Problem(path));
        }

        return version < SchemaVersion ? SchemaChange.Upgrade
            : triggers.GuardsExact && HasStateRow(connection) ? SchemaChange.None
            : SchemaChange.RestoreGuards;
    }

    public override void Apply(ISqliteConnection connection, SchemaChange change)
    {
        base.Apply(connection, change);
        var stateRowExisted = HasStateRow(connection);
        foreach (var sql in BlockDbSql.KeyMapGuards)
        {
            connection.Execute(sql);
        }

        if (change == SchemaChange.RestoreGuards)
        {
            // Every open map must reload: a generation above any it has seen (a re-created state row starts from the clock).
            connection.Execute(stateRowExisted
                ? BlockDbSql.BumpGeneration
                : string.Create(CultureInfo.InvariantCulture, $"""UPDATE "BlockDbState" SET "Generation" = {DateTime.UtcNow.Ticks}"""));
        }
    }

    /// <summary>Only <see cref="SelectXorInsertStrategy.SelectThenInsert"/>: the key map's lookup, then an insert under the write lock.</summary>
    public override IReadOnlyList<SelectXorInsertStrategy> Strategies { get; } = [SelectXorInsertStrategy.SelectThenInsert];

    protected override string StrategyReason =>
        ": it has no unique index for INSERT OR IGNORE or ON CONFLICT to work on, and always looks a block up in its key map, then inserts it under the write lock";

    /// <summary>
    /// The database's key map: its keys seeded with the file's recorded seed (a random one until the first snapshot
    /// records it), loading from the snapshot file beside the database unless <see cref="IndexOptions.KeyMapFile"/>
    /// is <see cref="KeyMapFileMode.Off"/>; a read-only database reads a snapshot but never writes one.
    /// </summary>
    public override LayoutState Open(BlockDbOptions options, ISqliteConnection connection, string path, ILogger logger)
    {
        var snapshot = options.Index.KeyMapFile == KeyMapFileMode.Off ? null : new KeyMapFile(path, logger);
        return new State(new BlockKeyMap(options.Index.KeyMapMemoryLimitMegabytes, KeyMapFile.ReadHasher(connection), snapshot));
    }

    /// <summary>Every guard trigger with its exact text, no other trigger, and the state row.</summary>
    public static bool GuardsIntact(ISqliteConnection connection) => KeyMapTriggers.Read(connection).Intact && HasStateRow(connection);

    private static bool HasStateRow(ISqliteConnection connection) =>
        connection.QueryText("""SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'BlockDbState'""") == "1"
        && connection.QueryText("""SELECT COUNT(*) FROM "BlockDbState" WHERE "Key" = 1""") == "1";

    /// <summary>The database's key map, shared by its sessions.</summary>
    private sealed class State(BlockKeyMap map) : LayoutState
    {
        public override LayoutDefinition Definition => Instance;

        public override (long Blocks, long Bytes) MapUsage => (map.Count, map.MemoryBytes);

        public override bool HasMap => true;

        public override void Report(MapLoadReporter reporter) => map.Reporter = reporter;

        public override ISessionHandle OpenSession(SqliteServices s) =>
            s.Open(new KeyMapSession(map, new KeyMapWrites(s.Connection, map, s.Transaction, s.VolumeGuard, s.Settings.BulkImport)));

        public override (BlockDbFinding MapMissing, bool GuardsIntact) CheckLayout(ISqliteConnection connection, CancellationToken cancellationToken) =>
            (KeyMapCheck.Run(connection, map, cancellationToken), GuardsIntact(connection));

        public override long RenumberFloor(ISqliteConnection connection) =>
            long.Parse(connection.QueryText(BlockDbSql.ReadMaxBlockId) ?? "0", NumberStyles.Integer, CultureInfo.InvariantCulture);

        public override void SealIds(ISqliteConnection connection, long maxId)
        {
            using var raise = connection.Prepare(BlockDbSql.RaiseMaxBlockId);
            raise.BindInt64(1, maxId);
            raise.ExecuteNonQuery();
        }

        public override void AfterRepair() => map.Reset();

        public override void Close(Func<int, ISqliteConnection> open) => map.WriteSnapshot(open);
    }
}
