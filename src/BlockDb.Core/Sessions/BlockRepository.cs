using BlockDb.Blocksets;
using BlockDb.Collection;
using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Layouts;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.Sessions;

/// <summary>
/// The repository session: every operation of <see cref="IBlockRepository"/> on one connection. Each call is a
/// <see cref="CallScope"/> (gate [G1], metrics, failure bookkeeping [B2]); the layout's <see cref="IBlockStore"/> finds
/// and writes blocks; <see cref="BlocksetService"/> reads and writes blocksets; the <see cref="SqliteTransaction"/> runs
/// the transaction and the <see cref="CommitPolicy"/> commits between calls [B1]. Statements are prepared at open.
/// </summary>
internal sealed partial class BlockRepository : IBlockRepository
{
    /// <summary>Reads per read transaction in WAL mode when <see cref="BatchingOptions.ReadsPerTransaction"/> is not set.</summary>
    public const int DefaultReadsPerTransaction = 256;

    private readonly ISqliteConnection _connection;
    private readonly string _path;
    private readonly bool _readOnly;
    private readonly bool _wholeCalls;
    private readonly Action<BlockRepository> _onDisposed;
    private long _cacheHits;
    private long _cacheMisses;
    private readonly CallGate _gate = new();
    private readonly CallSite _site;
    private readonly SqliteTransaction _tx;
    private readonly CommitPolicy _policy;
    private readonly IdleTimer? _idleTimer;
    private readonly IBlockStore _store;
    private readonly BlocksetService _blocksets;
    private readonly VolumeGuard _volumeGuard;
    private readonly ISqliteStatement _counts;
    private readonly Microsoft.Extensions.Logging.ILogger _logger;
    private VolumeService? _volumes;
    private CollectionService? _collect;

    public BlockRepository(ISqliteConnection connection, SessionSettings settings, Action<BlockRepository> onDisposed)
    {
        _connection = connection;
        _path = settings.Path;
        _logger = settings.Logger;
        _readOnly = settings.ReadOnly;
        _wholeCalls = settings.WholeCalls;
        _onDisposed = onDisposed;
        AppliedPragmas = settings.AppliedPragmas;

        // Read batching by default only in WAL mode: in the rollback-journal modes a held read blocks other writers' commits.
        var reads = settings.Batching.ReadsPerTransaction ?? (AppliedPragmas.JournalMode == JournalMode.Wal ? DefaultReadsPerTransaction : 1);
        _tx = new SqliteTransaction(connection, settings, reads);
        _policy = new CommitPolicy(settings.Batching, _tx);
        _site = new CallSite(_gate, _policy, "sqlite", settings.Provider, _path, _logger);
        _volumeGuard = new VolumeGuard(connection, _tx);
        _store = settings.Layout.CreateStore(connection, _tx, _volumeGuard, settings.Strategy);
        _blocksets = new BlocksetService(connection, _tx, _store, _volumeGuard, settings.WholeCalls);
        _counts = connection.Prepare(BlockDbSql.Counts);
        var commitAge = _readOnly ? null : settings.Batching.CommitAfterMilliseconds;
        if (commitAge is not null || _tx.Reads.Enabled)
        {
            _idleTimer = new IdleTimer(_gate, _policy, _tx, commitAge);
        }
    }

    public PragmaSettings AppliedPragmas { get; }

    public int PendingWrites => _policy.Pending;

    public SqliteCacheStats? ReadCacheStats()
    {
        ObjectDisposedException.ThrowIf(_gate.IsClosed, this);
        return _connection.ReadCacheStats();
    }

    /// <summary>
    /// Page-cache hits and misses for the metrics (<c>blockdb.page_cache.*</c>): read now when the session is idle, else
    /// the last reading (never waiting for a call, never inside one); (0, 0) when the provider does not expose them.
    /// After dispose, the final reading.
    /// </summary>
    internal (long Hits, long Misses) SampleCacheStats()
    {
        if (_gate.TryEnterBackground())
        {
            try
            {
                StoreCacheStats();
            }
            finally
            {
                _gate.Exit();
            }
        }

        return (Volatile.Read(ref _cacheHits), Volatile.Read(ref _cacheMisses));
    }

    private void StoreCacheStats()
    {
        try
        {
            if (_connection.ReadCacheStats() is { } stats)
            {
                Volatile.Write(ref _cacheHits, stats.Hits);
                Volatile.Write(ref _cacheMisses, stats.Misses);
            }
        }
        catch (BlockDbException)
        {
            // A metric is not worth a failure: the last reading stays.
        }
    }

    public ValueTask CommitAsync(CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(CommitAsync));
        try
        {
            call.Enter(this, cancellationToken);
            _tx.Commit();
            return ValueTask.CompletedTask;
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed();
        }
    }

    public ValueTask RollbackAsync(CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(RollbackAsync));
        try
        {
            call.Enter(this, cancellationToken);
            _tx.Rollback();
            return ValueTask.CompletedTask;
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed();
        }
    }

    public ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(GetCountsAsync));
        try
        {
            call.Enter(this, cancellationToken);
            _tx.EnterRead();
            try
            {
                _counts.Step();
                return new(new BlockDbCounts(_counts.ColumnInt64(0), _counts.ColumnInt64(1), _counts.ColumnInt64(2)));
            }
            finally
            {
                _counts.Reset();
            }
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<BlockDbCounts>();
        }
    }

    /// <summary>
    /// Waits for a call in flight to return [G2], ends the open batch as <see cref="BatchingOptions.OnDispose"/> says,
    /// then closes the connection (finalizing its statements).
    /// </summary>
    /// <exception cref="InvalidOperationException">Called from inside one of this session's own calls.</exception>
    /// <exception cref="BlockDbBatchRolledBackException">The age commit failed after the last call (the connection is closed all the same) [B4].</exception>
    public void Dispose() => _gate.Close(DisposeCore);

    /// <inheritdoc cref="Dispose"/>
    public ValueTask DisposeAsync() => _gate.CloseAsync(DisposeCore);

    private void DisposeCore()
    {
        _idleTimer?.Dispose();
        try
        {
            _policy.EndAtDispose();
        }
        finally
        {
            StoreCacheStats();
            _connection.Dispose();
            _onDisposed(this);
        }

        // An age commit that failed after the last call: its writes are not in the file, so dispose says so [B4].
        _policy.ThrowDeferred();
    }

    /// <summary>The volume calls, prepared on first use.</summary>
    private VolumeService Volumes => _volumes ??= new VolumeService(_connection, _tx, _volumeGuard);

    /// <summary>Refuses a write on a read-only database.</summary>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    private void RequireWritable(string operation)
    {
        if (_readOnly)
        {
            throw new BlockDbReadOnlyException(operation, _path);
        }
    }
}
