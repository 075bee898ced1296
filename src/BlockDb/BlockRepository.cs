using System.Buffers;
using BlockDb.Drivers;
using BlockDb.KeyMap;
using BlockDb.Sessions;
using BlockDb.Stores;

namespace BlockDb;

/// <summary>
/// The repository session: every operation of <see cref="IBlockRepository"/> on one connection. The layout's
/// <see cref="IBlockStore"/> finds and writes blocks; blocksets are written here, the same for every layout; the
/// <see cref="WriteBatch"/> owns the transaction; the <see cref="SessionGate"/> lets one call in at a time and makes
/// disposal wait for it. Statements are prepared once when the session opens.
/// </summary>
internal sealed class BlockRepository : IBlockRepository
{
    private const int CancellationCheckInterval = 256;

    private readonly ISqliteConnection _connection;
    private readonly string _path;
    private readonly bool _readOnly;
    private readonly DisposeBehavior _onDispose;
    private readonly Action<BlockRepository> _onDisposed;
    private readonly SessionGate _gate = new();
    private readonly WriteBatch _batch;
    private readonly BatchAgeTimer? _ageTimer;
    private readonly IBlockStore _store;
    private readonly ISqliteStatement _blockSize;
    private readonly ISqliteStatement _insertBlockset;
    private readonly ISqliteStatement _insertEntry;
    private readonly ISqliteStatement _getBlockset;
    private readonly ISqliteStatement _list;
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
        _store = settings.Layout switch
        {
            BlockLayout.KeyMap => new KeyMapBlockStore(connection, settings.KeyMap ?? throw new ArgumentException("The KeyMap layout needs its key map.", nameof(settings)), _batch),
            BlockLayout.BlobHash => new IndexedBlockStore<BlobHashCodec>(connection, _batch, settings.Strategy),
            _ => new IndexedBlockStore<TextHashCodec>(connection, _batch, settings.Strategy),
        };
        _blockSize = connection.Prepare(BlockDbSql.GetBlockSize);
        _insertBlockset = connection.Prepare(BlockDbSql.InsertBlockset);
        _insertEntry = connection.Prepare(BlockDbSql.InsertBlocksetEntry);
        _getBlockset = connection.Prepare(BlockDbSql.GetBlockset);
        _list = connection.Prepare(BlockDbSql.ListBlocksetBlocks);
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
        Call((hash, size), static (r, s) =>
        {
            ValidateBlock(s.hash, s.size);
            return r._store.Find(s.hash, s.size);
        }, cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        Call((hash, size), static (r, s) =>
        {
            ValidateBlock(s.hash, s.size);
            r.RequireWritable(nameof(InsertBlockAsync));
            return r._store.Insert(s.hash, s.size);
        }, cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        Call((hash, size), static (r, s) =>
        {
            ValidateBlock(s.hash, s.size);
            r.RequireWritable(nameof(SelectXorInsertAsync));
            return r._store.SelectXorInsert(s.hash, s.size);
        }, cancellationToken);

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default) =>
        Call((blocks, fullHash, cancellationToken), static (r, s) => r.AddBlockset(s.blocks, s.fullHash, s.cancellationToken), cancellationToken);

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default) =>
        Call((blockIds, fullHash, cancellationToken), static (r, s) => r.AddBlockset(s.blockIds, s.fullHash, s.cancellationToken), cancellationToken);

    public ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        Call(blocksetId, static (r, id) => r.ListBlocksetBlocks(id), cancellationToken);

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        Call(blocksetId, static (r, id) => r.GetBlockset(id), cancellationToken);

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

    private void RequireWritable(string operation)
    {
        if (_readOnly)
        {
            throw new BlockDbReadOnlyException(operation, _path);
        }
    }

    private long AddBlockset(IReadOnlyList<BlockKey> blocks, string? fullHash, CancellationToken cancellationToken)
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

        RequireWritable(nameof(AddBlocksetAsync));

        // The blocks are resolved inside the write transaction, so none can be deleted between the lookup and the entry.
        return _batch.Write((this, blocks, fullHash, cancellationToken), static s =>
        {
            var (r, blocks, fullHash, cancellationToken) = s;
            var ids = ArrayPool<long>.Shared.Rent(blocks.Count);
            try
            {
                long length = 0;
                for (var i = 0; i < blocks.Count; i++)
                {
                    CheckCancellation(i, cancellationToken);
                    var block = blocks[i];
                    ids[i] = r._store.Find(block.Hash, block.Size)
                        ?? throw new BlockNotFoundException($"Block {i} of the blockset (hash {block.Hash}, {block.Size} bytes) is not in the index; add it first (SelectXorInsertAsync). Nothing of the blockset was written.", i);
                    length = checked(length + block.Size);
                }

                return r.WriteBlockset(ids, blocks.Count, length, fullHash, cancellationToken);
            }
            finally
            {
                ArrayPool<long>.Shared.Return(ids);
            }
        });
    }

    private long AddBlockset(IReadOnlyList<long> blockIds, string? fullHash, CancellationToken cancellationToken)
    {
        ValidateBlockset(blockIds, fullHash);
        RequireWritable(nameof(AddBlocksetAsync));
        return _batch.Write((this, blockIds, fullHash, cancellationToken), static s =>
        {
            var (r, blockIds, fullHash, cancellationToken) = s;
            var ids = ArrayPool<long>.Shared.Rent(blockIds.Count);
            try
            {
                long length = 0;
                for (var i = 0; i < blockIds.Count; i++)
                {
                    CheckCancellation(i, cancellationToken);
                    var id = ids[i] = blockIds[i];
                    length = checked(length + (r.BlockSize(id)
                        ?? throw new BlockNotFoundException($"Block {i} of the blockset (ID {id}) is not in the index. Nothing of the blockset was written.", i)));
                }

                return r.WriteBlockset(ids, blockIds.Count, length, fullHash, cancellationToken);
            }
            finally
            {
                ArrayPool<long>.Shared.Return(ids);
            }
        });
    }

    /// <summary>Writes a blockset and its entries inside a savepoint (all of it, or nothing), and counts one write.</summary>
    private long WriteBlockset(long[] ids, int count, long length, string? fullHash, CancellationToken cancellationToken)
    {
        var blocksetId = _batch.InSavepoint((this, ids, count, length, fullHash, cancellationToken), static s =>
        {
            var (r, ids, count, length, fullHash, cancellationToken) = s;
            r._insertBlockset.BindInt64(1, length);
            if (fullHash is null)
            {
                r._insertBlockset.BindNull(2);
            }
            else
            {
                r._insertBlockset.BindText(2, fullHash);
            }

            long blocksetId;
            try
            {
                r._insertBlockset.Step();
                blocksetId = r._insertBlockset.ColumnInt64(0);
            }
            finally
            {
                r._insertBlockset.Reset();
            }

            r._insertEntry.BindInt64(1, blocksetId);
            for (var i = 0; i < count; i++)
            {
                CheckCancellation(i + 1, cancellationToken);
                r._insertEntry.BindInt64(2, i);
                r._insertEntry.BindInt64(3, ids[i]);
                r._insertEntry.ExecuteNonQuery();
            }

            return blocksetId;
        });
        _batch.EndWrite(wrote: true);
        return blocksetId;
    }

    private IReadOnlyList<BlocksetBlock> ListBlocksetBlocks(long blocksetId)
    {
        var blocks = new List<BlocksetBlock>();
        _list.BindInt64(1, blocksetId);
        try
        {
            while (_list.Step())
            {
                blocks.Add(new BlocksetBlock((int)_list.ColumnInt64(0), _list.ColumnInt64(1), _store.ReadHash(_list, 2), _list.ColumnInt64(3)));
            }
        }
        finally
        {
            _list.Reset();
        }

        if (blocks.Count == 0)
        {
            // A blockset always has entries, so none means no such blockset; GetBlockset throws the typed error.
            GetBlockset(blocksetId);
        }

        return blocks;
    }

    private long? BlockSize(long id)
    {
        _blockSize.BindInt64(1, id);
        try
        {
            return _blockSize.Step() ? _blockSize.ColumnInt64(0) : null;
        }
        finally
        {
            _blockSize.Reset();
        }
    }

    private BlocksetInfo GetBlockset(long blocksetId)
    {
        _getBlockset.BindInt64(1, blocksetId);
        try
        {
            return _getBlockset.Step()
                ? new BlocksetInfo(blocksetId, _getBlockset.ColumnInt64(0), _getBlockset.ColumnText(1), (int)_getBlockset.ColumnInt64(2))
                : throw new BlocksetNotFoundException(blocksetId);
        }
        finally
        {
            _getBlockset.Reset();
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

    private static void CheckCancellation(int i, CancellationToken cancellationToken)
    {
        if (i % CancellationCheckInterval == 0)
        {
            cancellationToken.ThrowIfCancellationRequested();
        }
    }
}

/// <summary>What a session needs from its database: frozen when the session opens.</summary>
/// <param name="Path">The database file, for messages.</param>
/// <param name="Layout">The file's layout.</param>
/// <param name="KeyMap">The database's key map (KeyMap layout only).</param>
/// <param name="Batching">When the session commits.</param>
/// <param name="Strategy">The select-xor-insert strategy of the indexed layouts.</param>
/// <param name="ReadOnly">Whether writes are refused.</param>
/// <param name="AppliedPragmas">The pragmas read back from the session's connection.</param>
internal sealed record SessionSettings(
    string Path,
    BlockLayout Layout,
    BlockKeyMap? KeyMap,
    BatchingOptions Batching,
    SelectXorInsertStrategy Strategy,
    bool ReadOnly,
    PragmaSettings AppliedPragmas);
