using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Import;
using BlockDb.Layouts;
using BlockDb.Opening;
using BlockDb.Sessions;
using BlockDb.Shared;
using BlockDb.Sql;
using BlockDb.Volumes;
using Microsoft.Extensions.Logging;

namespace BlockDb.Sqlite;

/// <summary>
/// The SQLite engine's <see cref="Database"/>: one SQLite file through one <see cref="ISqliteDriver"/>, the schema
/// checked or created, the pragmas applied and verified, the layout's shared state (the KeyMap layout's key map), its
/// sessions' connections, the enumerations' read cursors, and the check and repair on connections of their own.
/// </summary>
/// <remarks>
/// In External mode (<see cref="BlockDatabaseBuilder.UseCallerConnection"/>) the caller's connection is the only one:
/// the schema check, the one session, the check and the listings all run on it, inside the caller's transaction, and
/// BlockDb opens no connection to the file and closes none [X3]; no pragma is applied.
/// </remarks>
internal sealed partial class SqliteDatabase : Database, ISqliteBlockDatabase
{
    private readonly ISqliteDriver _driver;
    private readonly PragmaSettings _requested;
    private readonly LayoutState _layout;
    private readonly ConcurrentDictionary<IReadCursor, byte> _cursors = new();
    private readonly CommitClock _commits;
    private readonly CallerConnection? _caller;
    private readonly bool _cacheCounters;

    /// <summary>Opens the file (options frozen and validated by the caller); with <paramref name="caller"/>, inside the caller's transaction on its connection.</summary>
    public SqliteDatabase(BlockDbOptions options, ISqliteDriver driver, string path, ILogger logger, CallerConnection? caller = null)
        : base(options, "sqlite", driver.Name, path, logger)
    {
        _caller = caller;
        _driver = driver;
        _requested = Pragmas.Resolve(options.Pragmas);
        using var activity = Instruments.StartActivity("blockdb.open", Tags);
        try
        {
            using var connection = OpenConnection();
            EngineVersion = connection.QueryText(BlockDbSql.SqliteVersionQuery) ?? "unknown";
            LayoutDefinition definition;
            if (caller is null)
            {
                definition = Schema.Open(connection, path, options.Index.Layout, options.ReadOnly, found => found.Validate(options), logger);
            }
            else
            {
                caller.RequireTransaction();
                definition = Schema.OpenInCallerTransaction(connection, path, options.Index.Layout, found =>
                {
                    found.Validate(options);
                    CallerOptions.RequireLayout(found.Layout);
                });
            }

            _layout = definition.Open(options, connection, path, logger);
            AppliedPragmas = caller is null ? Pragmas.ApplyAndVerify(connection, _requested, logger, path, options.ReadOnly) : Pragmas.Read(connection);
            _cacheCounters = connection.ReadCacheStats() is not null;
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.NotADatabase)
        {
            throw e.Rephrase($"{Quoted.Path(path)} is not a SQLite database file (SQLITE_NOTADB); BlockDb left it untouched. {e.Message}");
        }

        _commits = CommitClock.Acquire(path);
        _layout.Report(new KeyMap.MapLoadReporter(path, driver.Name, logger));
        StartObserving();

        Log.DatabaseOpened(logger, path, Layout, driver.Name, EngineVersion, AppliedPragmas);
    }

    public override string Engine => "SQLite";

    public override string EngineVersion { get; }

    public PragmaSettings AppliedPragmas { get; }

    public override BlockLayout Layout => _layout.Definition.Layout;

    public (long Blocks, long Bytes) KeyMapUsage => _layout.MapUsage;

    public SqliteCacheStats? ReadCacheStats() => _cacheCounters ? CacheTotals() : null;

    /// <summary>Whether the connection and its transaction are the caller's (External mode).</summary>
    internal bool External => _caller is not null;

    /// <summary>External mode: throws unless the caller's transaction is open [X2].</summary>
    internal void RequireCallerTransaction() => _caller?.RequireTransaction();

    /// <summary>The file's layout and its state in this database.</summary>
    internal LayoutState LayoutState => _layout;

    public override IAsyncEnumerable<BlockInfo> EnumerateBlocksAsync(BlockFilter? filter = null, CancellationToken cancellationToken = default)
    {
        var volume = filter?.VolumeId;
        var unreferenced = filter?.UnreferencedOnly ?? false;
        var codec = _layout.Definition;
        return new ReadCursor<BlockInfo>(
            this,
            _layout.Sql.EnumerateBlocks,
            s =>
            {
                if (volume is { } v)
                {
                    s.BindInt64(1, v);
                }
                else
                {
                    s.BindNull(1);
                }

                s.BindInt64(2, unreferenced ? 1 : 0);
            },
            s => new BlockInfo(s.ColumnInt64(0), BlockKey.Stored(codec.ReadBinaryHash(s, 1), s.ColumnInt64(2)), s.ColumnIsNull(3) ? null : s.ColumnInt64(3)),
            cancellationToken);
    }

    public override IAsyncEnumerable<BlocksetInfo> EnumerateBlocksetsAsync(CancellationToken cancellationToken = default) =>
        new ReadCursor<BlocksetInfo>(
            this,
            BlockDbSql.EnumerateBlocksets,
            null,
            static s => new BlocksetInfo(s.ColumnInt64(0), s.ColumnInt64(1), s.ColumnText(2), (int)s.ColumnInt64(3)),
            cancellationToken);

    public override IAsyncEnumerable<VolumeInfo> EnumerateVolumesAsync(CancellationToken cancellationToken = default) =>
        new ReadCursor<VolumeInfo>(this, _layout.Sql.EnumerateVolumes, null, VolumeService.ReadVolume, cancellationToken);

    protected override ValueTask<ISessionHandle> OpenEngineSessionAsync(BatchingOptions batching, Action<ISessionHandle> onClosed, bool bulkImport, CancellationToken cancellationToken) =>
        new(OpenSession(batching, onClosed, bulkImport: bulkImport));

    /// <summary>A bulk import's own session (registered, so disposing the database waits for its call in flight).</summary>
    protected override async ValueTask<IImportTarget> OpenImportTargetAsync(string operation, CancellationToken cancellationToken) =>
        new SessionImportTarget(await OpenRegisteredSessionAsync(SessionImportTarget.Batching, bulkImport: true, cancellationToken).ConfigureAwait(false));

    /// <summary>
    /// The SQLite shared session: a group-commit writer over one writer session [S2] and a pool of reader sessions.
    /// The writer's calls are whole (a write that fails or is cancelled leaves nothing in the group's transaction); the
    /// readers never write (no write batching, no commit age) and batch their reads as the database's options say.
    /// Its sessions are its own (never registered), so the database's dispose never disposes one under its writer loop.
    /// </summary>
    protected override SharedBlockSession OpenEngineSharedSession(Action<SharedBlockSession> onClosed)
    {
        var options = Frozen.GroupCommit;
        var writer = new GroupCommitWriter(OpenSession(SharedWriterBatching, static _ => { }), options, Tags);
        var configured = Frozen.Batching;
        var readerBatching = new BatchingOptions
        {
            CommitEvery = 1,
            CommitAfterMilliseconds = null,
            OnDispose = DisposeBehavior.Rollback,
            ReadsPerTransaction = configured.ReadsPerTransaction,
            ReadTransactionMilliseconds = configured.ReadTransactionMilliseconds,
        };
        var readers = new SessionPool(
            () => OpenSession(readerBatching, static _ => { }),
            options.MaxReaders > 0 ? options.MaxReaders : 2 * Environment.ProcessorCount);
        var refusal = ReadOnly ? () => ReadOnlyRefusal("a write of the shared session") : (Func<BlockDbReadOnlyException>?)null;
        return new SharedBlockSession(readers, writer, readFirst: true, refusal, onClosed);
    }

    /// <summary>
    /// The shared session's writer commits when its queue is drained, never by count or age, and rolls back at dispose
    /// what no caller waits for. No read batching: no read timer enters its gate between rounds, so the group-commit
    /// loop is the gate's only user.
    /// </summary>
    private static readonly BatchingOptions SharedWriterBatching = new() { CommitEvery = 0, CommitAfterMilliseconds = null, OnDispose = DisposeBehavior.Rollback, ReadsPerTransaction = 1 };

    protected override ValueTask<BlockDbCheckResult> CheckCoreAsync(CancellationToken cancellationToken)
    {
        RequireCallerTransaction();
        using var connection = OpenConfiguredConnection();
        return new(SqliteCheck.Check(connection, _layout, cancellationToken, inCallerTransaction: External));
    }

    protected override void RefuseRepair()
    {
        if (_layout.Definition.RepairRefused is { } refused)
        {
            throw new NotSupportedException($"RepairAsync on {Quoted.Path(DataSource)} ({Layout} layout): {refused}. Nothing was changed.");
        }
    }

    protected override ValueTask<BlockDbRepairResult> RepairCoreAsync(CancellationToken cancellationToken)
    {
        // No busy wait: a repair beside another writer is refused at once (providers that retry BUSY on their own wait their minimum).
        using var connection = OpenConfiguredConnection(busyTimeoutMilliseconds: 0);
        try
        {
            return new(SqliteCheck.Repair(connection, _layout, DataSource, cancellationToken));
        }
        finally
        {
            // Sessions' read snapshots restart, so none reads the file as it was before the repair.
            _commits.Tick();
        }
    }

    /// <summary>
    /// Opens a session with its own batching (the shared session's writer commits only when told).
    /// <paramref name="bulkImport"/>: <see cref="SessionSettings.BulkImport"/>.
    /// </summary>
    private ISessionHandle OpenSession(BatchingOptions batching, Action<ISessionHandle> onClosed, bool bulkImport = false)
    {
        ThrowIfDisposed();
        _caller?.TakeSession();
        ISqliteConnection? connection = null;
        try
        {
            RequireCallerTransaction();
            connection = OpenConnection();
            var applied = _caller is null ? Pragmas.ApplyAndVerify(connection, _requested, Logger, DataSource, ReadOnly) : AppliedPragmas;
            var settings = new SessionSettings(DataSource, _layout, batching, Frozen.SelectXorInsert, ReadOnly, applied, _commits, _driver.Name, Logger, External, bulkImport);
            return _layout.OpenSession(new SqliteServices(connection, settings, onClosed));
        }
        catch
        {
            connection?.Dispose();
            _caller?.ReturnSession();
            throw;
        }
    }

    protected override void OnSessionClosed() => _caller?.ReturnSession();

    public override void ObserveKeyMap(List<Measurement<long>> measurements, bool bytes)
    {
        if (_layout.HasMap)
        {
            var (blocks, size) = _layout.MapUsage;
            measurements.Add(new(bytes ? size : blocks, Tags));
        }
    }

    public override void ObserveQueue(List<Measurement<long>> measurements) =>
        measurements.Add(new(SharedSessions.Sum(s => (long)s.QueueLength), Tags));

    public override void ObservePageCache(List<Measurement<long>> measurements, bool hits)
    {
        var total = CacheTotals();
        measurements.Add(new(hits ? total.Hits : total.Misses, Tags));
    }

    /// <summary>Counts the three tables on a connection of its own (for <c>blockdb.rows</c>).</summary>
    protected override Task<BlockDbCounts> CountRowsAsync(CancellationToken cancellationToken) => _caller is not null
        ? Task.FromException<BlockDbCounts>(CallerConnectionRefuses("blockdb.rows", "a count off the caller's thread would share its connection"))
        : Task.Run(
        () =>
        {
            using var connection = OpenWorkConnection();
            using var counts = connection.Prepare(BlockDbSql.Counts);
            return counts.Step()
                ? new BlockDbCounts(counts.ColumnInt64(0), counts.ColumnInt64(1), counts.ColumnInt64(2))
                : throw new InvalidOperationException("The counts query returned no row.");
        },
        cancellationToken);
}
