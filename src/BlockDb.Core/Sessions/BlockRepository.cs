using BlockDb.Drivers;
using BlockDb.Sessions;
using BlockDb.Sql;
using BlockDb.Stores;

namespace BlockDb;

/// <summary>
/// The repository session: every operation of <see cref="IBlockRepository"/> on one connection. The layout's
/// <see cref="IBlockStore"/> finds and writes blocks; <see cref="BlocksetStatements"/> reads and writes blocksets, the
/// same for every layout; the <see cref="WriteBatch"/> owns the transaction; the <see cref="SessionGate"/> lets one call in at a time and makes
/// disposal wait for it. Statements are prepared once when the session opens.
/// </summary>
internal sealed class BlockRepository : IBlockRepository
{
    private readonly ISqliteConnection _connection;
    private readonly string _path;
    private readonly bool _readOnly;
    private readonly DisposeBehavior _onDispose;
    private readonly Action<BlockRepository> _onDisposed;
    private readonly SessionGate _gate = new();
    private readonly WriteBatch _batch;
    private readonly BatchAgeTimer? _ageTimer;
    private readonly IBlockStore _store;
    private readonly BlocksetStatements _blocksets;
    private readonly ISqliteStatement _counts;

    public BlockRepository(ISqliteConnection connection, SessionSettings settings, Action<BlockRepository> onDisposed)
    {
        _connection = connection;
        _path = settings.Path;
        _readOnly = settings.ReadOnly;
        _onDispose = settings.Batching.OnDispose;
        _onDisposed = onDisposed;
        AppliedPragmas = settings.AppliedPragmas;
        _batch = new WriteBatch(connection, settings.Batching);
        _store = settings.Layout.CreateStore(connection, _batch, settings.Strategy);
        _blocksets = new BlocksetStatements(connection, _batch, _store);
        _counts = connection.Prepare(BlockDbSql.Counts);
        if (settings.Batching.CommitAfterMilliseconds is { } age && !_readOnly)
        {
            _ageTimer = new BatchAgeTimer(_gate, _batch, age);
        }
    }

    public PragmaSettings AppliedPragmas { get; }

    public int PendingWrites => _batch.Pending;

    public SqliteCacheStats? ReadCacheStats()
    {
        ObjectDisposedException.ThrowIf(_gate.IsClosed, this);
        return _connection.ReadCacheStats();
    }

    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        CallOnBlock(hash, size, null, static (r, h, s) => r._store.Find(h, s), cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        CallOnBlock(hash, size, nameof(InsertBlockAsync), static (r, h, s) => r._store.Insert(h, s), cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        CallOnBlock(hash, size, nameof(SelectXorInsertAsync), static (r, h, s) => r._store.SelectXorInsert(h, s), cancellationToken);

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default) =>
        Call((blocks, fullHash, cancellationToken), static (r, s) =>
        {
            ValidateBlocks(s.blocks, s.fullHash);
            return r.Writable(nameof(AddBlocksetAsync))._blocksets.Add(s.blocks, s.fullHash, s.cancellationToken);
        }, cancellationToken);

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default) =>
        Call((blockIds, fullHash, cancellationToken), static (r, s) =>
        {
            ValidateBlockset(s.blockIds, s.fullHash);
            return r.Writable(nameof(AddBlocksetAsync))._blocksets.Add(s.blockIds, s.fullHash, s.cancellationToken);
        }, cancellationToken);

    public ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        Call(blocksetId, static (r, id) => r._blocksets.List(id), cancellationToken);

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        Call(blocksetId, static (r, id) => r._blocksets.Get(id), cancellationToken);

    public ValueTask CommitAsync(CancellationToken cancellationToken = default) =>
        Call(static r => r._batch.Commit(), cancellationToken);

    public ValueTask RollbackAsync(CancellationToken cancellationToken = default) =>
        Call(static r => r._batch.Rollback(), cancellationToken);

    public ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default) =>
        Call(0, static (r, _) =>
        {
            try
            {
                r._counts.Step();
                return new BlockDbCounts(r._counts.ColumnInt64(0), r._counts.ColumnInt64(1), r._counts.ColumnInt64(2));
            }
            finally
            {
                r._counts.Reset();
            }
        }, cancellationToken);

    /// <summary>
    /// Waits for a call in flight to return, ends the open batch as <see cref="BatchingOptions.OnDispose"/> says, then
    /// closes the connection (finalizing its statements).
    /// </summary>
    /// <exception cref="InvalidOperationException">Called from inside one of this session's own calls.</exception>
    /// <exception cref="BlockDbBatchRolledBackException">The batch-age timer's commit failed after the last call (the connection is closed all the same).</exception>
    public void Dispose() => _gate.Close(DisposeCore);

    /// <inheritdoc cref="Dispose"/>
    public async ValueTask DisposeAsync() => await _gate.CloseAsync(DisposeCore).ConfigureAwait(false);

    private void DisposeCore()
    {
        _ageTimer?.Dispose();
        try
        {
            if (_onDispose == DisposeBehavior.Commit)
            {
                _batch.Commit();
            }
            else
            {
                _batch.Rollback();
            }
        }
        finally
        {
            _connection.Dispose();
            _onDisposed(this);
        }

        // An age commit that failed after the last call: its writes are not in the file, so dispose says so.
        _batch.ThrowDeferred();
    }

    /// <summary>
    /// Every public call: one caller at a time, the token checked first, a failure of the batch-age timer reported
    /// first, the work done synchronously (SQLite is synchronous), and a failure returned in the task rather than
    /// thrown at the call site. The static lambdas and struct state keep this free of allocation.
    /// </summary>
    private ValueTask<TResult> Call<TState, TResult>(TState state, Func<BlockRepository, TState, TResult> operation, CancellationToken cancellationToken)
    {
        try
        {
            _gate.Enter(this, cancellationToken);
            try
            {
                _batch.ThrowDeferred();
                return new(operation(this, state));
            }
            catch (Exception e) when (_batch.Lost(e) is { } lost)
            {
                throw lost;
            }
            finally
            {
                _gate.Exit();
            }
        }
        catch (Exception e)
        {
            return ValueTask.FromException<TResult>(e);
        }
    }

    private ValueTask Call(Action<BlockRepository> operation, CancellationToken cancellationToken)
    {
        var done = Call(operation, static (r, op) =>
        {
            op(r);
            return true;
        }, cancellationToken);
        return done.IsCompletedSuccessfully ? ValueTask.CompletedTask : new ValueTask(done.AsTask());
    }

    /// <summary>A call on one block: the hash and size checked, a write refused on a read-only database, then <paramref name="operation"/>.</summary>
    private ValueTask<TResult> CallOnBlock<TResult>(string hash, long size, string? write, Func<BlockRepository, string, long, TResult> operation, CancellationToken cancellationToken) =>
        Call((hash, size, write, operation), static (r, s) =>
        {
            ValidateBlock(s.hash, s.size);
            if (s.write is not null)
            {
                r.Writable(s.write);
            }

            return s.operation(r, s.hash, s.size);
        }, cancellationToken);

    /// <summary>This session, once a write is known to be allowed.</summary>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    private BlockRepository Writable(string operation) => _readOnly ? throw new BlockDbReadOnlyException(operation, _path) : this;

    /// <summary>Checks a blockset given by hash and size before anything is written.</summary>
    private static void ValidateBlocks(IReadOnlyList<BlockKey> blocks, string? fullHash)
    {
        var count = ValidateBlockset(blocks, fullHash);
        for (var i = 0; i < count; i++)
        {
            var block = blocks[i];
            if (block.Hash is null || !BlockHash.IsValid(block.Hash) || block.Size < 1)
            {
                throw new ArgumentException($"Block {i} of the blockset is invalid: hash '{block.Hash}', size {block.Size}; give a base64 hash with '=' padding and a size of 1 byte or more.", nameof(blocks));
            }
        }
    }

    private static void ValidateBlock(string hash, long size)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
    }

    private static int ValidateBlockset<T>(IReadOnlyList<T> blocks, string? fullHash)
    {
        ArgumentNullException.ThrowIfNull(blocks);
        if (blocks.Count == 0)
        {
            throw new ArgumentException("A blockset needs at least one block; an empty list was given.", nameof(blocks));
        }

        if (fullHash is not null)
        {
            BlockHash.Validate(fullHash, nameof(fullHash));
        }

        return blocks.Count;
    }
}
