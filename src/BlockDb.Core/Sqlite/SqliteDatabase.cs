using System.Collections.Concurrent;
using System.Diagnostics;
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
/// An open block index in one SQLite file, through one <see cref="ISqliteDriver"/>: the schema checked or created, the
/// pragmas applied and verified, the layout's shared state (the KeyMap layout's key map), and the sessions, shared
/// repositories and maintenance runs opened from it, all of which its dispose waits for. Thread-safe.
/// </summary>
/// <remarks>
/// In External mode (<see cref="BlockDatabaseBuilder.UseCallerConnection"/>) the caller's connection is the only one:
/// the schema check, the one session, the check and the listings all run on it, inside the caller's transaction, and
/// BlockDb opens no connection to the file and closes none [X3]; no pragma is applied.
/// Invariants: after <c>_disposal</c> has begun, no session or shared repository is registered that the dispose does not
/// dispose (each re-checks it after registering and disposes itself when it lost the race); every dispose, concurrent
/// or later, returns only when the first one's work has ended (<see cref="DisposeOnce"/>).
/// </remarks>
internal sealed class SqliteDatabase : IBlockDatabase, IBlockDbObservable
{
    private readonly BlockDbOptions _options;
    private readonly ISqliteDriver _driver;
    private readonly PragmaSettings _requested;
    private readonly ILogger _logger;
    private readonly LayoutState _layout;
    private readonly ConcurrentDictionary<ISessionHandle, byte> _sessions = new();
    private readonly ConcurrentDictionary<SharedBlockSession, byte> _shared = new();
    private readonly ConcurrentDictionary<IReadCursor, byte> _cursors = new();
    private readonly MaintenanceRunner _maintenance = new();
    private readonly CommitClock _commits;
    private readonly RowCountCache _rows;
    private long _closedCacheHits;
    private long _closedCacheMisses;
    private readonly DisposeOnce _disposal = new();
    private readonly CallerConnection? _caller;

    /// <summary>Opens the file (options frozen and validated by the caller); with <paramref name="caller"/>, inside the caller's transaction on its connection.</summary>
    public SqliteDatabase(BlockDbOptions options, ISqliteDriver driver, string path, ILogger logger, CallerConnection? caller = null)
    {
        _options = options;
        _caller = caller;
        _driver = driver;
        DataSource = path;
        _logger = logger;
        _requested = options.Pragmas.Resolve();
        Tags = Instruments.DatabaseTags("sqlite", driver.Name, path);
        using var activity = Instruments.StartActivity("blockdb.open", Tags);
        try
        {
            using var connection = OpenConnection();
            EngineVersion = connection.QueryText(BlockDbSql.SqliteVersionQuery) ?? "unknown";
            LayoutDefinition definition;
            if (caller is null)
            {
                definition = Schema.Open(connection, path, options.Index.Layout, options.ReadOnly, found => found.Validate(options), _logger);
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

            _layout = definition.Open(options, connection, path, _logger);
            AppliedPragmas = caller is null ? Pragmas.ApplyAndVerify(connection, _requested, _logger, path, options.ReadOnly) : Pragmas.Read(connection);
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.NotADatabase)
        {
            throw e.Rephrase($"{Quoted.Path(path)} is not a SQLite database file (SQLITE_NOTADB); BlockDb left it untouched. {e.Message}");
        }

        _commits = CommitClock.Acquire(path);
        _layout.Report(new KeyMap.MapLoadReporter(path, driver.Name, logger));
        _rows = new RowCountCache(CountRowsAsync, Tags);
        Instruments.Register(this);

        Log.DatabaseOpened(_logger, path, Layout, driver.Name, EngineVersion, AppliedPragmas);
    }

    /// <summary>This database's measurement tags: system, provider, file.</summary>
    internal TagList Tags { get; }

    public string ProviderName => _driver.Name;

    public string Engine => "SQLite";

    public string EngineVersion { get; }

    public string? SqliteVersion => EngineVersion;

    public string DataSource { get; }

    public PragmaSettings AppliedPragmas { get; }

    public BlockDbOptions Options => _options.Clone();

    public BlockLayout Layout => _layout.Definition.Layout;

    public (long Blocks, long Bytes) KeyMapUsage => _layout.MapUsage;

    /// <summary>Whether the connection and its transaction are the caller's (External mode).</summary>
    internal bool External => _caller is not null;

    /// <summary>External mode: throws unless the caller's transaction is open [X2].</summary>
    internal void RequireCallerTransaction() => _caller?.RequireTransaction();

    /// <summary>Whether the database was opened read-only.</summary>
    internal bool ReadOnly => _options.ReadOnly;

    /// <summary>The file's layout and its state in this database.</summary>
    internal LayoutState LayoutState => _layout;

    public ValueTask<IBlockRepository> OpenSessionAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            cancellationToken.ThrowIfCancellationRequested();
            return new(OpenSession(_options.Batching));
        }
        catch (Exception e)
        {
            return ValueTask.FromException<IBlockRepository>(e);
        }
    }

    public IAsyncEnumerable<BlockInfo> EnumerateBlocksAsync(BlockFilter? filter = null, CancellationToken cancellationToken = default)
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
            s => new BlockInfo(s.ColumnInt64(0), codec.ReadHash(s, 1), s.ColumnInt64(2), s.ColumnIsNull(3) ? null : s.ColumnInt64(3)),
            cancellationToken);
    }

    public IAsyncEnumerable<BlocksetInfo> EnumerateBlocksetsAsync(CancellationToken cancellationToken = default) =>
        new ReadCursor<BlocksetInfo>(
            this,
            BlockDbSql.EnumerateBlocksets,
            null,
            static s => new BlocksetInfo(s.ColumnInt64(0), s.ColumnInt64(1), s.ColumnText(2), (int)s.ColumnInt64(3)),
            cancellationToken);

    public IAsyncEnumerable<VolumeInfo> EnumerateVolumesAsync(CancellationToken cancellationToken = default) =>
        new ReadCursor<VolumeInfo>(this, _layout.Sql.EnumerateVolumes, null, VolumeService.ReadVolume, cancellationToken);

    public async ValueTask<ImportResult> ImportBlocksAsync(IAsyncEnumerable<ImportBlock> blocks, ImportOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blocks);
        var target = OpenImportTarget(nameof(ImportBlocksAsync), options);
        await using (target.ConfigureAwait(false))
        {
            return Imported("blocks", await BulkImport.ImportBlocksAsync(target, blocks, options ?? new ImportOptions(), cancellationToken).ConfigureAwait(false));
        }
    }

    public async ValueTask<ImportResult> ImportBlocksetsAsync(IAsyncEnumerable<ImportBlockset> blocksets, ImportOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blocksets);
        var target = OpenImportTarget(nameof(ImportBlocksetsAsync), options);
        await using (target.ConfigureAwait(false))
        {
            return Imported("blocksets", await BulkImport.ImportBlocksetsAsync(target, blocksets, options ?? new ImportOptions(), cancellationToken).ConfigureAwait(false));
        }
    }

    private ImportResult Imported(string kind, ImportResult result)
    {
        Log.ImportFinished(_logger, kind, DataSource, result.Read, result.Created, result.Existing, result.Transactions, (long)result.Elapsed.TotalMilliseconds);
        return result;
    }

    /// <summary>A bulk import's own session (registered, so disposing the database waits for its call in flight).</summary>
    private SessionImportTarget OpenImportTarget(string operation, ImportOptions? options)
    {
        RefuseOnCallerConnection(operation, "it commits in batches of its own");
        options?.Validate();
        if (_options.ReadOnly)
        {
            throw new BlockDbReadOnlyException(operation, DataSource);
        }

        return new SessionImportTarget(OpenSession(SessionImportTarget.Batching, bulkImport: true));
    }

    public ISharedBlockRepository OpenSharedRepository()
    {
        ObjectDisposedException.ThrowIf(_disposal.Begun, this);
        RefuseOnCallerConnection(nameof(OpenSharedRepository), "its writer commits group commits of its own");
        var shared = NewSharedSession();
        _shared.TryAdd(shared, 0);
        if (_disposal.Begun)
        {
            shared.Dispose();
            throw new ObjectDisposedException(nameof(IBlockDatabase), "The BlockDb database was disposed while the shared repository was opening.");
        }

        return shared;
    }

    /// <summary>
    /// The SQLite shared repository: a group-commit writer over one writer session [S2] and a pool of reader sessions.
    /// The writer's calls are whole (a write that fails or is cancelled leaves nothing in the group's transaction); the
    /// readers never write (no write batching, no commit age) and batch their reads as the database's options say.
    /// </summary>
    private SharedBlockSession NewSharedSession()
    {
        var options = _options.GroupCommit;
        var writer = new GroupCommitWriter(OpenSession(SharedWriterBatching, register: false, wholeCalls: true), options, Tags);
        var configured = _options.Batching;
        var readerBatching = new BatchingOptions
        {
            CommitEvery = 1,
            CommitAfterMilliseconds = null,
            OnDispose = DisposeBehavior.Rollback,
            ReadsPerTransaction = configured.ReadsPerTransaction,
            ReadTransactionMilliseconds = configured.ReadTransactionMilliseconds,
        };
        var readers = new SessionPool(
            () => OpenSession(readerBatching, register: false),
            options.MaxReaders > 0 ? options.MaxReaders : 2 * Environment.ProcessorCount);
        var refusal = _options.ReadOnly ? () => new BlockDbReadOnlyException("a write of the shared repository", DataSource) : (Func<BlockDbReadOnlyException>?)null;
        return new SharedBlockSession(readers, writer, readFirst: true, refusal, s => _shared.TryRemove(s, out _));
    }

    /// <summary>The shared repository's writer commits when its queue is drained, never by count or age, and rolls back at dispose what no caller waits for.</summary>
    private static readonly BatchingOptions SharedWriterBatching = new() { CommitEvery = 0, CommitAfterMilliseconds = null, OnDispose = DisposeBehavior.Rollback };

    public ValueTask<BlockDbCheckResult> CheckAsync(CancellationToken cancellationToken = default) =>
        _maintenance.Run(
            this,
            token =>
            {
                using var activity = Instruments.StartActivity("blockdb.check", Tags);
                var started = Stopwatch.GetTimestamp();
                RequireCallerTransaction();
                using var connection = OpenConfiguredConnection();
                var result = SqliteCheck.Check(connection, _layout, token, inCallerTransaction: External);
                activity?.SetTag("blockdb.check.clean", result.IsClean);
                Log.CheckFinished(_logger, DataSource, result.IsClean, (long)Stopwatch.GetElapsedTime(started).TotalMilliseconds);
                return result;
            },
            cancellationToken);

    public ValueTask<BlockDbRepairResult> RepairAsync(CancellationToken cancellationToken = default)
    {
        if (_caller is not null)
        {
            return ValueTask.FromException<BlockDbRepairResult>(CallerConnectionRefuses(nameof(RepairAsync), "it commits a write transaction of its own"));
        }

        if (_layout.Definition.RepairRefused is { } refused)
        {
            return ValueTask.FromException<BlockDbRepairResult>(new NotSupportedException($"RepairAsync on {Quoted.Path(DataSource)} ({Layout} layout): {refused}. Nothing was changed."));
        }

        if (_options.ReadOnly)
        {
            return ValueTask.FromException<BlockDbRepairResult>(new BlockDbReadOnlyException(nameof(RepairAsync), DataSource));
        }

        return _maintenance.Run(
            this,
            token =>
            {
                using var activity = Instruments.StartActivity("blockdb.repair", Tags);

                // No busy wait: a repair beside another writer is refused at once (providers that retry BUSY on their own wait their minimum).
                using var connection = OpenConfiguredConnection(busyTimeoutMilliseconds: 0);
                try
                {
                    return SqliteCheck.Repair(connection, _layout, _logger, DataSource, token);
                }
                finally
                {
                    // Sessions' read snapshots restart, so none reads the file as it was before the repair.
                    _commits.Tick();
                }
            },
            cancellationToken);
    }

    /// <summary>
    /// Opens a session with its own batching (the shared repository's writer commits only when told). A session of a
    /// shared repository (<paramref name="register"/> false) is owned and disposed by it, so the database's dispose
    /// never disposes it under the repository's running writer loop. <paramref name="wholeCalls"/>: see
    /// <see cref="SessionSettings.WholeCalls"/>; <paramref name="bulkImport"/>: <see cref="SessionSettings.BulkImport"/>.
    /// </summary>
    internal ISessionHandle OpenSession(BatchingOptions batching, bool register = true, bool wholeCalls = false, bool bulkImport = false)
    {
        ObjectDisposedException.ThrowIf(_disposal.Begun, this);
        _caller?.TakeSession();
        ISqliteConnection? connection = null;
        ISessionHandle session;
        try
        {
            RequireCallerTransaction();
            connection = OpenConnection();
            var applied = _caller is null ? Pragmas.ApplyAndVerify(connection, _requested, _logger, DataSource, _options.ReadOnly) : AppliedPragmas;
            var settings = new SessionSettings(DataSource, _layout, batching, _options.SelectXorInsert, _options.ReadOnly, applied, _commits, _driver.Name, _logger, wholeCalls, External, bulkImport);
            session = _layout.OpenSession(new SqliteServices(connection, settings, register ? Closed : static _ => { }));
        }
        catch
        {
            connection?.Dispose();
            _caller?.ReturnSession();
            throw;
        }

        if (!register)
        {
            return session;
        }

        _sessions.TryAdd(session, 0);
        if (_disposal.Begun)
        {
            // The database was disposed while this session opened: its dispose may not have seen it.
            session.Dispose();
            throw new ObjectDisposedException(nameof(IBlockDatabase), "The BlockDb database was disposed while the session was opening.");
        }

        return session;
    }

    /// <summary>A registered session closed: its final page-cache counters join the closed sessions' totals (so the counters never go down).</summary>
    private void Closed(ISessionHandle session)
    {
        if (_sessions.TryRemove(session, out _))
        {
            _caller?.ReturnSession();
            var (hits, misses) = session.SampleCacheStats();
            Interlocked.Add(ref _closedCacheHits, hits);
            Interlocked.Add(ref _closedCacheMisses, misses);
        }
    }

    void IBlockDbObservable.ObserveKeyMap(List<Measurement<long>> measurements, bool bytes)
    {
        if (_layout.HasMap)
        {
            var (blocks, size) = _layout.MapUsage;
            measurements.Add(new(bytes ? size : blocks, Tags));
        }
    }

    void IBlockDbObservable.ObserveQueue(List<Measurement<long>> measurements) =>
        measurements.Add(new(_shared.Keys.Sum(s => (long)s.QueueLength), Tags));

    void IBlockDbObservable.ObservePageCache(List<Measurement<long>> measurements, bool hits)
    {
        var total = hits ? Volatile.Read(ref _closedCacheHits) : Volatile.Read(ref _closedCacheMisses);
        foreach (var session in _sessions.Keys)
        {
            var (h, m) = session.SampleCacheStats();
            total += hits ? h : m;
        }

        measurements.Add(new(total, Tags));
    }

    void IBlockDbObservable.ObserveRows(List<Measurement<long>> measurements) => _rows.Observe(measurements);

    /// <summary>Counts the three tables on a connection of its own (for <c>blockdb.rows</c>).</summary>
    private Task<BlockDbCounts> CountRowsAsync(CancellationToken cancellationToken) => _caller is not null
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

    /// <summary>A connection with the pragmas applied, for an enumeration.</summary>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    internal ISqliteConnection OpenReadConnection() => OpenWorkConnection();

    /// <summary>A connection with the pragmas applied, for work outside sessions (a conversion).</summary>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    internal ISqliteConnection OpenWorkConnection()
    {
        ObjectDisposedException.ThrowIf(_disposal.Begun, this);
        return OpenConfiguredConnection();
    }

    /// <summary>Registers an open enumeration, so the database's dispose closes it; closes it at once when the database was disposed meanwhile.</summary>
    internal void Register(IReadCursor cursor)
    {
        _cursors.TryAdd(cursor, 0);
        if (_disposal.Begun)
        {
            cursor.Dispose();
            throw new ObjectDisposedException(nameof(IBlockDatabase), "The BlockDb database was disposed while the enumeration was opening.");
        }
    }

    /// <summary>Forgets a closed enumeration.</summary>
    internal void Unregister(IReadCursor cursor) => _cursors.TryRemove(cursor, out _);

    /// <summary>
    /// Cancels and waits for running checks and repairs, disposes the shared repositories (their queued writes commit
    /// first, their reads in flight finish) and the sessions still open (each waits for a call in flight, then commits
    /// or rolls back as <see cref="BatchingOptions.OnDispose"/> says); the file is then released.
    /// </summary>
    /// <exception cref="AggregateException">Ending a session's batch failed (its connection is closed all the same).</exception>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <inheritdoc cref="Dispose"/>
    /// <remarks>A second dispose, concurrent or later, waits for the first one's work and returns without its exception.</remarks>
    public ValueTask DisposeAsync() => _disposal.RunAsync(DisposeCoreAsync);

    private async ValueTask DisposeCoreAsync()
    {
        Instruments.Unregister(this);
        await _rows.DisposeAsync().ConfigureAwait(false);
        await _maintenance.CloseAsync().ConfigureAwait(false);
        List<Exception>? errors = null;
        foreach (var disposable in _cursors.Keys.Cast<IAsyncDisposable>().Concat(_shared.Keys).Concat(_sessions.Keys))
        {
            try
            {
                await disposable.DisposeAsync().ConfigureAwait(false);
            }
            catch (Exception e)
            {
                (errors ??= []).Add(e);
            }
        }

        if (_caller is not null)
        {
            // BlockDb's statements finalized; the caller's connection stays open and the caller's [X3].
            _caller.Dispose();
        }
        else if (!_options.ReadOnly)
        {
            // Every session is closed, so the layout's state is still: the KeyMap layout writes its snapshot (never throws).
            _layout.Close(busyTimeout => OpenConfiguredConnection(busyTimeout));
        }

        _commits.Release();

        if (errors is not null)
        {
            throw new AggregateException("Disposing the open BlockDb sessions failed.", errors);
        }
    }

    /// <summary>A connection with the pragmas applied (for the check and the repair).</summary>
    private ISqliteConnection OpenConfiguredConnection(int? busyTimeoutMilliseconds = null)
    {
        if (_caller is not null)
        {
            return _caller.View(); // no pragma is BlockDb's to set on the caller's connection
        }

        var connection = OpenConnection(busyTimeoutMilliseconds);
        try
        {
            Pragmas.ApplyAndVerify(connection, Requested(busyTimeoutMilliseconds), _logger, DataSource, _options.ReadOnly);
            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    /// <summary>A new connection to the file; in External mode a view of the caller's (BlockDb opens none [X3]).</summary>
    private ISqliteConnection OpenConnection(int? busyTimeoutMilliseconds = null)
    {
        if (_caller is not null)
        {
            return _caller.View();
        }

        var mode = _options.ReadOnly ? SqliteOpenMode.ReadOnly : SqliteOpenMode.ReadWriteCreate;
        var requested = Requested(busyTimeoutMilliseconds);
        var connection = _driver.Open(new SqliteOpenOptions(DataSource, mode, requested.BusyTimeout ?? 0));
        try
        {
            Pragmas.ApplyBusyTimeout(connection, requested);
            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    /// <summary>The requested pragmas, with a connection's own busy timeout in place of the configured one when it has one (the repair waits for no lock).</summary>
    private PragmaSettings Requested(int? busyTimeoutMilliseconds) =>
        busyTimeoutMilliseconds is { } ms ? _requested with { BusyTimeout = ms } : _requested;

    /// <summary>Refuses an operation that commits on its own, in External mode.</summary>
    /// <exception cref="NotSupportedException">The database runs on a caller's connection.</exception>
    private void RefuseOnCallerConnection(string operation, string why)
    {
        if (_caller is not null)
        {
            throw CallerConnectionRefuses(operation, why);
        }
    }

    private NotSupportedException CallerConnectionRefuses(string operation, string why) =>
        new($"{operation} is not available on a caller's connection ({Quoted.Path(DataSource)}): {why}, and the transaction is the caller's. Open BlockDb on its own connection for it (without UseCallerConnection).");
}
