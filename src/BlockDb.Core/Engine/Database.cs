using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using BlockDb.Diagnostics;
using BlockDb.Import;
using BlockDb.Shared;
using Microsoft.Extensions.Logging;

namespace BlockDb.Engine;

/// <summary>
/// An open block index, whatever its engine: the open bookkeeping (sessions, shared sessions, imports and
/// enumerations registered, so the dispose ends them), the session and shared-session openers, the check and repair
/// front end (<see cref="MaintenanceRunner"/>), the bulk import, the gauges and the one dispose order. Each engine
/// (<c>Sqlite/SqliteDatabase</c>, <c>PostgreSqlDatabase</c>) overrides only what differs. Thread-safe.
/// </summary>
/// <remarks>
/// Invariant [G4]: after <c>_disposal</c> has begun, nothing is registered that the dispose does not end (each opener
/// registers, then re-checks, and ends what it opened when it lost the race); every dispose, concurrent or later,
/// returns only when the first one's work has ended [G3].
/// </remarks>
internal abstract partial class Database : IBlockDatabase, IBlockDbObservable
{
    private readonly BlockDbOptions _options;
    private readonly ConcurrentDictionary<ISessionHandle, byte> _sessions = new();
    private readonly ConcurrentDictionary<SharedBlockSession, byte> _shared = new();
    private readonly ConcurrentDictionary<IImportTarget, byte> _imports = new();
    private readonly MaintenanceRunner _maintenance = new();
    private readonly DisposeOnce _disposal = new();
    private readonly RowCountCache _rows;
    private readonly Lock _closedCacheLock = new();
    private SqliteCacheStats _closedCache;

    /// <summary>Sets up the bookkeeping; the engine opens its file or server afterwards and then calls <see cref="StartObserving"/>.</summary>
    /// <param name="options">The frozen, validated options.</param>
    /// <param name="system">The engine's name in metrics and spans (<c>sqlite</c>, <c>postgresql</c>).</param>
    /// <param name="providerName">The provider's name.</param>
    /// <param name="dataSource">The file's path or the server's name, for messages.</param>
    /// <param name="logger">The database's logger.</param>
    protected Database(BlockDbOptions options, string system, string providerName, string dataSource, ILogger logger)
    {
        _options = options;
        ProviderName = providerName;
        DataSource = dataSource;
        Logger = logger;
        Tags = Instruments.DatabaseTags(system, providerName, dataSource);
        _rows = new RowCountCache(CountRowsAsync, Tags);
    }

    public string ProviderName { get; }

    public abstract string Engine { get; }

    public abstract string EngineVersion { get; }

    public string DataSource { get; }

    public BlockDbOptions Options => _options.Clone();

    public abstract BlockLayout Layout { get; }

    /// <summary>This database's measurement and span tags: system, provider, data source.</summary>
    internal TagList Tags { get; }

    /// <summary>Whether the database was opened read-only.</summary>
    internal bool ReadOnly => _options.ReadOnly;

    /// <summary>The frozen options (not a copy: never changed).</summary>
    protected BlockDbOptions Frozen => _options;

    /// <summary>The database's logger.</summary>
    protected ILogger Logger { get; }

    /// <summary>Whether a dispose has begun.</summary>
    protected bool Disposing => _disposal.Begun;

    /// <summary>The shared sessions still open.</summary>
    protected ICollection<SharedBlockSession> SharedSessions => _shared.Keys;

    /// <summary>Makes the gauges observable; the engine calls it once its open has succeeded.</summary>
    protected void StartObserving() => Instruments.Register(this);

    public async ValueTask<IBlockSession> OpenSessionAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        cancellationToken.ThrowIfCancellationRequested();
        return await OpenRegisteredSessionAsync(_options.Batching, bulkImport: false, cancellationToken).ConfigureAwait(false);
    }

    public ISharedBlockSession OpenSharedSession()
    {
        ThrowIfDisposed();
        RefuseOwnCommits(nameof(OpenSharedSession), "its writer commits group commits of its own");
        var shared = OpenEngineSharedSession(s => _shared.TryRemove(s, out _));
        _shared.TryAdd(shared, 0);
        if (_disposal.Begun)
        {
            shared.Dispose();
            throw Disposed("the shared session was opening");
        }

        return shared;
    }

    /// <summary>
    /// Opens one session of this engine with <paramref name="batching"/>; <paramref name="onClosed"/> is called once
    /// when it is disposed (the database forgets it). The database registers it.
    /// </summary>
    /// <param name="batching">The session's batching.</param>
    /// <param name="onClosed">Called at the end of the session's dispose.</param>
    /// <param name="bulkImport">Whether the session is a bulk import's (SQLite: <c>SessionSettings.BulkImport</c>).</param>
    /// <param name="cancellationToken">Cancels the open.</param>
    protected abstract ValueTask<ISessionHandle> OpenEngineSessionAsync(BatchingOptions batching, Action<ISessionHandle> onClosed, bool bulkImport, CancellationToken cancellationToken);

    /// <summary>Opens this engine's shared session; <paramref name="onClosed"/> is called once when it is disposed.</summary>
    protected abstract SharedBlockSession OpenEngineSharedSession(Action<SharedBlockSession> onClosed);

    /// <summary>Opens a session and registers it (so the dispose ends it), or ends it when a dispose has begun meanwhile.</summary>
    /// <exception cref="ObjectDisposedException">The database was disposed while the session opened.</exception>
    protected async ValueTask<ISessionHandle> OpenRegisteredSessionAsync(BatchingOptions batching, bool bulkImport, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        var session = await OpenEngineSessionAsync(batching, SessionClosed, bulkImport, cancellationToken).ConfigureAwait(false);
        _sessions.TryAdd(session, 0);
        if (_disposal.Begun)
        {
            // The database was disposed while this session opened: its dispose may not have seen it.
            await session.DisposeAsync().ConfigureAwait(false);
            throw Disposed("the session was opening");
        }

        return session;
    }

    /// <summary>A registered session closed: its final page-cache counters join the closed sessions' totals (so the counters never go down).</summary>
    private void SessionClosed(ISessionHandle session)
    {
        if (_sessions.TryRemove(session, out _))
        {
            if (session.SampleCacheStats() is { } final)
            {
                lock (_closedCacheLock)
                {
                    _closedCache = Add(_closedCache, final);
                }
            }

            OnSessionClosed();
        }
    }

    /// <summary>A registered session closed (SQLite External mode gives the caller's connection back).</summary>
    protected virtual void OnSessionClosed()
    {
    }

    /// <summary>
    /// The page-cache counters summed over the registered sessions, open (sampled: never waiting for a call) and closed
    /// (their final readings), for the <c>blockdb.page_cache.*</c> gauges and <see cref="ISqliteBlockDatabase.ReadCacheStats"/>.
    /// The counters never go down.
    /// </summary>
    protected SqliteCacheStats CacheTotals()
    {
        SqliteCacheStats total;
        lock (_closedCacheLock)
        {
            total = _closedCache;
        }

        foreach (var session in _sessions.Keys)
        {
            if (session.SampleCacheStats() is { } open)
            {
                total = Add(total, open);
            }
        }

        return total;
    }

    private static SqliteCacheStats Add(SqliteCacheStats a, SqliteCacheStats b) =>
        new(a.Hits + b.Hits, a.Misses + b.Misses, a.Writes + b.Writes, a.Spills + b.Spills);

    /// <summary>Refuses an operation that commits on its own when the transaction is not BlockDb's (SQLite External mode); nothing by default.</summary>
    /// <exception cref="NotSupportedException">The database runs on a caller's connection.</exception>
    protected virtual void RefuseOwnCommits(string operation, string why)
    {
    }

    /// <summary>The error for a write on a read-only database, with the engine's code.</summary>
    protected virtual BlockDbReadOnlyException ReadOnlyRefusal(string operation) => new(operation, DataSource);

    /// <exception cref="ObjectDisposedException">A dispose has begun.</exception>
    protected void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposal.Begun, this);

    /// <summary>The error for something that opened while the database was disposed.</summary>
    protected static ObjectDisposedException Disposed(string what) =>
        new(nameof(IBlockDatabase), $"The BlockDb database was disposed while {what}.");

    public abstract IAsyncEnumerable<BlockInfo> EnumerateBlocksAsync(BlockFilter? filter = null, CancellationToken cancellationToken = default);

    public abstract IAsyncEnumerable<BlocksetInfo> EnumerateBlocksetsAsync(CancellationToken cancellationToken = default);

    public abstract IAsyncEnumerable<VolumeInfo> EnumerateVolumesAsync(CancellationToken cancellationToken = default);

    /// <summary>Counts the three tables on a connection of the engine's own (for <c>blockdb.rows</c>).</summary>
    protected abstract Task<BlockDbCounts> CountRowsAsync(CancellationToken cancellationToken);

    public virtual void ObserveKeyMap(List<Measurement<long>> measurements, bool bytes)
    {
        // No key map by default.
    }

    public virtual void ObserveQueue(List<Measurement<long>> measurements)
    {
        // No group-commit queue by default (PostgreSQL: each shared write commits on a pooled session of its own).
    }

    public virtual void ObservePageCache(List<Measurement<long>> measurements, bool hits)
    {
        // No page cache counters by default (PostgreSQL: the server's are in pg_stat_database).
    }

    public void ObserveRows(List<Measurement<long>> measurements) => _rows.Observe(measurements);
}
