using System.Buffers;
using System.Diagnostics;
using BlockDb.Drivers;

namespace BlockDb;

/// <summary>
/// The repository session: every operation of <see cref="IBlockRepository"/> written once over the driver
/// contract, so each provider supplies only its driver. Statements are prepared once when the session opens.
/// </summary>
internal sealed class BlockRepository : IBlockRepository
{
    private const int CancellationCheckInterval = 256;

    private readonly ISqliteConnection _connection;
    private readonly BatchingOptions _batching;
    private readonly SelectXorInsertStrategy _strategy;
    private readonly Action<BlockRepository> _onDisposed;
    private readonly ISqliteStatement _find = null!;
    private readonly ISqliteStatement _insert;
    private readonly ISqliteStatement _insertOrIgnore = null!;
    private readonly ISqliteStatement _insertReturning = null!;
    private readonly ISqliteStatement _blockSize;
    private readonly ISqliteStatement _insertBlockset;
    private readonly ISqliteStatement _insertEntry;
    private readonly ISqliteStatement _getBlockset;
    private readonly ISqliteStatement _list;
    private readonly ISqliteStatement _counts;
    private readonly ISqliteStatement _begin;
    private readonly ISqliteStatement _commit;
    private readonly ISqliteStatement _rollback;
    private readonly ISqliteStatement _savepoint;
    private readonly ISqliteStatement _release;
    private readonly ISqliteStatement _rollbackTo;
    private readonly bool _blobHashes;
    private readonly BlockKeyMap? _map;
    private readonly ISqliteStatement? _getById;
    private readonly ISqliteStatement? _blocksAfter;
    private long _rewindTo;
    private long _batchStarted;
    private int _pending;
    private bool _batchOpen;
    private int _inCall;
    private bool _disposed;

    public BlockRepository(ISqliteConnection connection, BlockLayout layout, BlockKeyMap? map, BatchingOptions batching, SelectXorInsertStrategy strategy, PragmaSettings applied, Action<BlockRepository> onDisposed)
    {
        _blobHashes = layout != BlockLayout.TextHash;
        _map = layout == BlockLayout.KeyMap ? map ?? throw new ArgumentNullException(nameof(map), "The KeyMap layout needs its key map.") : null;
        _connection = connection;
        _batching = batching;
        _strategy = strategy;
        _onDisposed = onDisposed;
        AppliedPragmas = applied;
        _insert = connection.Prepare(BlockDbSql.InsertBlock);
        if (_map is null)
        {
            // The hash-index statements; the KeyMap layout has no hash index and finds blocks through its map.
            _find = connection.Prepare(BlockDbSql.FindBlock);
            _insertOrIgnore = connection.Prepare(BlockDbSql.InsertBlockOrIgnore);
            _insertReturning = connection.Prepare(BlockDbSql.InsertBlockReturningUnlessExists);
        }
        _blockSize = connection.Prepare(BlockDbSql.GetBlockSize);
        _insertBlockset = connection.Prepare(BlockDbSql.InsertBlockset);
        _insertEntry = connection.Prepare(BlockDbSql.InsertBlocksetEntry);
        _getBlockset = connection.Prepare(BlockDbSql.GetBlockset);
        _list = connection.Prepare(BlockDbSql.ListBlocksetBlocks);
        _counts = connection.Prepare(BlockDbSql.Counts);
        _begin = connection.Prepare(BlockDbSql.Begin);
        _commit = connection.Prepare(BlockDbSql.Commit);
        _rollback = connection.Prepare(BlockDbSql.Rollback);
        _savepoint = connection.Prepare(BlockDbSql.Savepoint);
        _release = connection.Prepare(BlockDbSql.ReleaseSavepoint);
        _rollbackTo = connection.Prepare(BlockDbSql.RollbackToSavepoint);
        if (_map is not null)
        {
            _getById = connection.Prepare(BlockDbSql.GetBlockById);
            _blocksAfter = connection.Prepare(BlockDbSql.BlocksAfter);
        }
    }

    public PragmaSettings AppliedPragmas { get; }

    public int PendingWrites => _pending;

    public SqliteCacheStats? ReadCacheStats()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        return _connection.ReadCacheStats();
    }

    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        Call((hash, size), static (r, s) =>
        {
            ValidateBlock(s.hash, s.size);
            return r.Find(s.hash, s.size);
        }, cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        Call((hash, size), static (r, s) =>
        {
            ValidateBlock(s.hash, s.size);
            return r._map is null ? r.WriteOne(s.hash, s.size, r._insert) : r.MapInsert(s.hash, s.size);
        }, cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        Call((hash, size), static (r, s) =>
        {
            ValidateBlock(s.hash, s.size);
            if (r._map is not null)
            {
                return r.MapSelectXorInsert(s.hash, s.size);
            }

            return r._strategy switch
            {
                SelectXorInsertStrategy.InsertOrIgnoreThenSelect => r.InsertOrIgnoreThenSelect(s.hash, s.size),
                SelectXorInsertStrategy.InsertReturningThenSelect => r.InsertReturningThenSelect(s.hash, s.size),
                _ => r.Find(s.hash, s.size) is { } id ? new SelectXorInsertResult(id, false) : new SelectXorInsertResult(r.WriteOne(s.hash, s.size, r._insert), true),
            };
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
        Call(static r => r.CommitBatch(), cancellationToken);

    public ValueTask RollbackAsync(CancellationToken cancellationToken = default) =>
        Call(static r => r.RollbackBatch(), cancellationToken);

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

    /// <summary>Ends the open batch as <see cref="BatchingOptions.OnDispose"/> says, then closes the connection (finalizing its statements).</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        try
        {
            if (_batchOpen)
            {
                if (_batching.OnDispose == DisposeBehavior.Commit)
                {
                    CommitBatch();
                }
                else
                {
                    RollbackBatch();
                }
            }
        }
        finally
        {
            _connection.Dispose();
            _onDisposed(this);
        }
    }

    public ValueTask DisposeAsync() => Completed.Run(Dispose);

    /// <summary>
    /// Every public call: one caller at a time, the token checked first, the work done synchronously (SQLite is
    /// synchronous), and a failure returned in the task rather than thrown at the call site. The static lambdas
    /// and struct state keep this free of allocation.
    /// </summary>
    private ValueTask<TResult> Call<TState, TResult>(TState state, Func<BlockRepository, TState, TResult> operation, CancellationToken cancellationToken)
    {
        try
        {
            Enter(cancellationToken);
            try
            {
                return new(operation(this, state));
            }
            finally
            {
                Exit();
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

        var ids = ArrayPool<long>.Shared.Rent(count);
        try
        {
            long length = 0;
            for (var i = 0; i < count; i++)
            {
                CheckCancellation(i, cancellationToken);
                var block = blocks[i];
                ids[i] = Find(block.Hash, block.Size)
                    ?? throw new BlockNotFoundException($"Block {i} of the blockset (hash {block.Hash}, {block.Size} bytes) is not in the index; add it first (SelectXorInsertAsync). Nothing of the blockset was written.", i);
                length = checked(length + block.Size);
            }

            return WriteBlockset(ids, count, length, fullHash, cancellationToken);
        }
        finally
        {
            ArrayPool<long>.Shared.Return(ids);
        }
    }

    private long AddBlockset(IReadOnlyList<long> blockIds, string? fullHash, CancellationToken cancellationToken)
    {
        var count = ValidateBlockset(blockIds, fullHash);
        var ids = ArrayPool<long>.Shared.Rent(count);
        try
        {
            long length = 0;
            for (var i = 0; i < count; i++)
            {
                CheckCancellation(i, cancellationToken);
                var id = ids[i] = blockIds[i];
                length = checked(length + (BlockSize(id)
                    ?? throw new BlockNotFoundException($"Block {i} of the blockset (ID {id}) is not in the index. Nothing of the blockset was written.", i)));
            }

            return WriteBlockset(ids, count, length, fullHash, cancellationToken);
        }
        finally
        {
            ArrayPool<long>.Shared.Return(ids);
        }
    }

    private IReadOnlyList<BlocksetBlock> ListBlocksetBlocks(long blocksetId)
    {
        var blocks = new List<BlocksetBlock>();
        _list.BindInt64(1, blocksetId);
        try
        {
            while (_list.Step())
            {
                blocks.Add(new BlocksetBlock((int)_list.ColumnInt64(0), _list.ColumnInt64(1), ReadHash(_list, 2), _list.ColumnInt64(3)));
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

    private void Enter(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (Interlocked.Exchange(ref _inCall, 1) != 0)
        {
            throw new InvalidOperationException("This BlockDb session is already running a call. Sessions are not thread-safe: await each call before the next, or open one session per task.");
        }

        if (cancellationToken.IsCancellationRequested)
        {
            Exit();
            cancellationToken.ThrowIfCancellationRequested();
        }
    }

    private void Exit() => Volatile.Write(ref _inCall, 0);

    private long? Find(string hash, long size)
    {
        if (_map is not null)
        {
            return MapFind(hash, size, catchUp: true);
        }

        BindHash(_find, 1, hash);
        _find.BindInt64(2, size);
        try
        {
            return _find.Step() ? _find.ColumnInt64(0) : null;
        }
        finally
        {
            _find.Reset();
        }
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

    /// <summary>Binds a hash as the layout stores it: the base64 text, or its decoded bytes.</summary>
    private void BindHash(ISqliteStatement statement, int index, string hash)
    {
        if (!_blobHashes)
        {
            statement.BindText(index, hash);
            return;
        }

        Span<byte> bytes = stackalloc byte[BlockKeyMap.MaxHashBytes];
        statement.BindBlob(index, bytes[..BlockHash.Decode(hash, bytes)]);
    }

    /// <summary>Reads a stored hash back as base64 text, whichever way the layout stores it.</summary>
    private string ReadHash(ISqliteStatement statement, int column)
    {
        if (!_blobHashes)
        {
            return statement.ColumnText(column)!;
        }

        Span<byte> bytes = stackalloc byte[BlockKeyMap.MaxHashBytes];
        var length = statement.ColumnBlob(column, bytes);
        return length is >= 0 and <= BlockKeyMap.MaxHashBytes
            ? Convert.ToBase64String(bytes[..length])
            : throw new BlockDbFormatException($"A stored block hash is {length} bytes; BlockDb stores 1 to 64.");
    }

    private long? MapFind(string hash, long size, bool catchUp)
    {
        Span<byte> key = stackalloc byte[BlockKeyMap.MaxHashBytes];
        return MapFind(key[..BlockHash.Decode(hash, key)], size, catchUp);
    }

    private long? MapFind(ReadOnlySpan<byte> key, long size, bool catchUp) => _map!.Find(key, size, _getById!, _blocksAfter!, catchUp);

    /// <summary>
    /// Select-xor-insert on the key map: a verified hit needs no lock; a miss is looked up again under the write
    /// lock (which catches up with every committed row) before the block is appended, so no duplicate can be made.
    /// </summary>
    private SelectXorInsertResult MapSelectXorInsert(string hash, long size)
    {
        Span<byte> buffer = stackalloc byte[BlockKeyMap.MaxHashBytes];
        var key = buffer[..BlockHash.Decode(hash, buffer)];
        if (MapFind(key, size, catchUp: false) is { } known)
        {
            return new SelectXorInsertResult(known, false);
        }

        if (LockedMapFind(key, size) is { } id)
        {
            EndWrite(wrote: false);
            return new SelectXorInsertResult(id, false);
        }

        return new SelectXorInsertResult(WriteOne(hash, size, _insert, key), true);
    }

    /// <summary>Insert on the key map: fails like the unique index of the other layouts when the block exists.</summary>
    private long MapInsert(string hash, long size)
    {
        Span<byte> buffer = stackalloc byte[BlockKeyMap.MaxHashBytes];
        var key = buffer[..BlockHash.Decode(hash, buffer)];
        if (LockedMapFind(key, size) is { } id)
        {
            ReleaseIdleBatch();
            throw new BlockDbException(
                $"Block ({hash}, {size} bytes) is already in the index as ID {id}; use SelectXorInsertAsync to get the ID of a block that may exist. (SQLITE_CONSTRAINT_UNIQUE, as the unique index of the other layouts reports.)",
                SqliteResultCode.Constraint,
                SqliteResultCode.ConstraintUnique);
        }

        return WriteOne(hash, size, _insert, key);
    }

    /// <summary>Opens the batch (taking the write lock), then looks the block up with catch-up.</summary>
    private long? LockedMapFind(ReadOnlySpan<byte> key, long size)
    {
        BeginWrite();
        try
        {
            return MapFind(key, size, catchUp: true);
        }
        catch (Exception e) when (BatchLost(e) is { } lost)
        {
            throw lost;
        }
        catch
        {
            ReleaseIdleBatch();
            throw;
        }
    }

    /// <summary>
    /// Runs an insert that returns the new ID (one row) inside the batch. The KeyMap layout passes the hash's
    /// decoded bytes (<paramref name="key"/>), which are bound and added to the map without decoding again.
    /// </summary>
    private long WriteOne(string hash, long size, ISqliteStatement insert, ReadOnlySpan<byte> key = default)
    {
        BeginWrite();
        long id;
        try
        {
            _map?.EnsureRoomForOne();
            if (_map is null)
            {
                BindHash(insert, 1, hash);
            }
            else
            {
                insert.BindBlob(1, key);
            }

            insert.BindInt64(2, size);
            try
            {
                insert.Step();
                id = insert.ColumnInt64(0);
                _map?.Add(key, id);
            }
            finally
            {
                insert.Reset();
            }
        }
        catch (Exception e) when (BatchLost(e) is { } lost)
        {
            throw lost;
        }
        catch
        {
            ReleaseIdleBatch();
            throw;
        }

        EndWrite(wrote: true);
        return id;
    }

    private SelectXorInsertResult InsertOrIgnoreThenSelect(string hash, long size)
    {
        BeginWrite();
        int changes;
        try
        {
            BindHash(_insertOrIgnore, 1, hash);
            _insertOrIgnore.BindInt64(2, size);
            changes = _insertOrIgnore.ExecuteNonQuery();
        }
        catch (Exception e) when (BatchLost(e) is { } lost)
        {
            throw lost;
        }
        catch
        {
            ReleaseIdleBatch();
            throw;
        }

        var id = Find(hash, size) ?? throw new BlockDbException($"Block ({hash}, {size} bytes) is missing right after INSERT OR IGNORE.");
        EndWrite(wrote: changes > 0);
        return new SelectXorInsertResult(id, changes > 0);
    }

    private SelectXorInsertResult InsertReturningThenSelect(string hash, long size)
    {
        BeginWrite();
        long? created;
        try
        {
            BindHash(_insertReturning, 1, hash);
            _insertReturning.BindInt64(2, size);
            try
            {
                created = _insertReturning.Step() ? _insertReturning.ColumnInt64(0) : null;
            }
            finally
            {
                _insertReturning.Reset();
            }
        }
        catch (Exception e) when (BatchLost(e) is { } lost)
        {
            throw lost;
        }
        catch
        {
            ReleaseIdleBatch();
            throw;
        }

        if (created is { } newId)
        {
            EndWrite(wrote: true);
            return new SelectXorInsertResult(newId, true);
        }

        var id = Find(hash, size) ?? throw new BlockDbException($"Block ({hash}, {size} bytes) conflicted on insert but is not found.");
        EndWrite(wrote: false);
        return new SelectXorInsertResult(id, false);
    }

    /// <summary>Writes a blockset and its entries inside a savepoint: all of it, or (on any failure or cancellation) nothing.</summary>
    private long WriteBlockset(long[] ids, int count, long length, string? fullHash, CancellationToken cancellationToken)
    {
        BeginWrite();
        long blocksetId;
        try
        {
            _savepoint.ExecuteNonQuery();
            try
            {
                _insertBlockset.BindInt64(1, length);
                if (fullHash is null)
                {
                    _insertBlockset.BindNull(2);
                }
                else
                {
                    _insertBlockset.BindText(2, fullHash);
                }

                try
                {
                    _insertBlockset.Step();
                    blocksetId = _insertBlockset.ColumnInt64(0);
                }
                finally
                {
                    _insertBlockset.Reset();
                }

                _insertEntry.BindInt64(1, blocksetId);
                for (var i = 0; i < count; i++)
                {
                    CheckCancellation(i + 1, cancellationToken);
                    _insertEntry.BindInt64(2, i);
                    _insertEntry.BindInt64(3, ids[i]);
                    _insertEntry.ExecuteNonQuery();
                }

                _release.ExecuteNonQuery();
            }
            catch
            {
                if (_connection.InTransaction)
                {
                    _rollbackTo.ExecuteNonQuery();
                    _release.ExecuteNonQuery();
                }

                throw;
            }
        }
        catch (Exception e) when (BatchLost(e) is { } lost)
        {
            throw lost;
        }
        catch
        {
            ReleaseIdleBatch();
            throw;
        }

        EndWrite(wrote: true);
        return blocksetId;
    }

    /// <summary>After a failed write: a transaction that holds no write of its own is ended, so the write lock is not kept while idle.</summary>
    private void ReleaseIdleBatch()
    {
        if (_batchOpen && _pending == 0)
        {
            CommitBatch();
        }
    }

    private void BeginWrite()
    {
        if (_batchOpen)
        {
            return;
        }

        _begin.ExecuteNonQuery();
        _batchOpen = true;
        _rewindTo = _map?.LastId ?? 0;
        _batchStarted = Stopwatch.GetTimestamp();
    }

    /// <summary>Counts a finished write and commits when the batch is full or old; a transaction this call opened without writing is closed at once, so no write lock is held for nothing.</summary>
    private void EndWrite(bool wrote)
    {
        if (wrote)
        {
            _pending++;
        }

        if (_pending == 0
            || (_batching.CommitEvery > 0 && _pending >= _batching.CommitEvery)
            || (_batching.CommitAfterMilliseconds is { } ms && Stopwatch.GetElapsedTime(_batchStarted).TotalMilliseconds >= ms))
        {
            CommitBatch();
        }
    }

    private void CommitBatch()
    {
        if (!_batchOpen)
        {
            return;
        }

        var pending = _pending;
        try
        {
            _commit.ExecuteNonQuery();
        }
        catch (BlockDbException e)
        {
            if (_connection.InTransaction)
            {
                _rollback.ExecuteNonQuery();
            }

            _map?.Rewind(_rewindTo);
            throw new BlockDbException($"{e.Message} The commit failed and its batch of {pending} writes was rolled back.", e.SqliteErrorCode, e.SqliteExtendedErrorCode, e);
        }
        finally
        {
            _batchOpen = false;
            _pending = 0;
        }
    }

    private void RollbackBatch()
    {
        if (!_batchOpen)
        {
            return;
        }

        try
        {
            if (_connection.InTransaction)
            {
                _rollback.ExecuteNonQuery();
            }
        }
        finally
        {
            _map?.Rewind(_rewindTo);
            _batchOpen = false;
            _pending = 0;
        }
    }

    /// <summary>
    /// After a failed write: some SQLite errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY, SQLITE_NOMEM) roll back
    /// the whole transaction (https://www.sqlite.org/lang_transaction.html). When that happened, the batch's
    /// uncommitted writes are gone; say so and start the next write with a new batch.
    /// </summary>
    private BlockDbException? BatchLost(Exception e)
    {
        if (!_batchOpen || _connection.InTransaction)
        {
            return null;
        }

        var lost = _pending;
        _map?.Rewind(_rewindTo);
        _batchOpen = false;
        _pending = 0;
        return e is BlockDbException b
            ? new BlockDbException($"{b.Message} SQLite rolled back the open batch: its {lost} uncommitted writes were discarded (committed data is intact).", b.SqliteErrorCode, b.SqliteExtendedErrorCode, b)
            : null;
    }
}
