using System.Runtime.CompilerServices;

namespace BlockDb.Engine;

/// <summary>
/// The one session class: every operation of <see cref="IBlockSession"/>, written once for every engine. Each call is
/// a <see cref="CallScope"/> (gate [G1], metrics, failure bookkeeping [B2]); the input is checked (<see cref="Require"/>)
/// and a text hash decoded at the entry; <typeparamref name="TEngine"/> runs the operation (for SQLite,
/// <see cref="Sqlite.SqliteSession{TLayout}"/> over the layout's session); the <see cref="CommitPolicy"/> commits
/// between calls [B1]. <typeparamref name="TEngine"/> is a struct, so the JIT compiles one copy per engine and layout
/// and calls it directly.
/// </summary>
internal sealed partial class BlockSession<TEngine> : ISessionHandle
    where TEngine : struct, IEngineSession
{
    private readonly TEngine _engine;
    private readonly bool _readOnly;
    private readonly Action<ISessionHandle> _onDisposed;
    private StrongBox<SqliteCacheStats>? _cacheStats;
    private readonly CallGate _gate;
    private readonly CallSite _site;
    private readonly CommitPolicy _policy;
    private readonly IdleTimer? _idleTimer;

    /// <param name="engine">The engine connection, owned by this session from now on.</param>
    /// <param name="site">The session's gate, commit policy and metrics names.</param>
    /// <param name="idleTimer">The age commit and read-transaction timer, or null.</param>
    /// <param name="readOnly">Whether writes are refused.</param>
    /// <param name="onDisposed">Called once, at the end of dispose.</param>
    public BlockSession(TEngine engine, CallSite site, IdleTimer? idleTimer, bool readOnly, Action<ISessionHandle> onDisposed)
    {
        _engine = engine;
        _site = site;
        _gate = site.Gate;
        _policy = site.Policy;
        _idleTimer = idleTimer;
        _readOnly = readOnly;
        _onDisposed = onDisposed;
    }

    public int PendingWrites => _policy.Pending;

    public IdleTimer? IdleTimer => _idleTimer;

    /// <inheritdoc/>
    /// <remarks>[O1]: only through <see cref="CallGate.TryEnterBackground"/>.</remarks>
    public SqliteCacheStats? SampleCacheStats()
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

        return Volatile.Read(ref _cacheStats)?.Value;
    }

    private void StoreCacheStats()
    {
        try
        {
            if (_engine.ReadCacheStats() is { } stats)
            {
                Volatile.Write(ref _cacheStats, new StrongBox<SqliteCacheStats>(stats)); // one reference: the four counters are read together
            }
        }
        catch (BlockDbException)
        {
            // A metric is not worth a failure: the last reading stays.
        }
    }

    public async ValueTask CommitAsync(CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(CommitAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            await call.WhilePending(_engine.CommitAsync()).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask RollbackAsync(CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(RollbackAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            await call.WhilePending(_engine.RollbackAsync()).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(GetCountsAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            return await call.WhilePending(_engine.GetCountsAsync(cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    /// <summary>
    /// Waits for a call in flight to return [G2], ends the open batch as <see cref="BatchingOptions.OnDispose"/> says,
    /// then closes the connection (finalizing its statements).
    /// </summary>
    /// <exception cref="InvalidOperationException">Called from inside one of this session's own calls.</exception>
    /// <exception cref="BlockDbBatchRolledBackException">The age commit failed after the last call (the connection is closed all the same) [B4].</exception>
    public void Dispose() => _gate.Close(() => Wait(DisposeCoreAsync()));

    /// <inheritdoc cref="Dispose"/>
    public ValueTask DisposeAsync() => _gate.CloseAsync(DisposeCoreAsync);

    /// <summary>Waits for a dispose that completes later (PostgreSQL's final commit); SQLite's has completed.</summary>
    private static void Wait(ValueTask disposing)
    {
        if (!disposing.IsCompletedSuccessfully)
        {
            disposing.AsTask().GetAwaiter().GetResult();
        }
    }

    private async ValueTask DisposeCoreAsync()
    {
        _idleTimer?.Dispose();
        try
        {
            await _policy.EndAtDisposeAsync().ConfigureAwait(false);
        }
        finally
        {
            StoreCacheStats();
            await _engine.CloseAsync().ConfigureAwait(false);
            _onDisposed(this);
        }

        // An age commit that failed after the last call: its writes are not in the file, so dispose says so [B4].
        _policy.ThrowDeferred();
    }

    /// <summary>Refuses a write on a read-only database.</summary>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    private void RequireWritable(string operation)
    {
        if (_readOnly)
        {
            throw _site.ReadOnly(operation);
        }
    }
}
