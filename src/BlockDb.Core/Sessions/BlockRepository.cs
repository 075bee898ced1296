using System.Buffers;
using System.Runtime.CompilerServices;
using BlockDb.Blocksets;
using BlockDb.Collection;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Sql;
using BlockDb.Volumes;

namespace BlockDb.Sessions;

/// <summary>
/// The repository session: every operation of <see cref="IBlockRepository"/> on one connection. The layout's
/// <see cref="IBlockStore"/> finds and writes blocks; <see cref="BlocksetService"/> reads and writes blocksets, the
/// same for every layout; the <see cref="WriteBatch"/> owns the transaction; the <see cref="SessionGate"/> lets one call in at a time and makes
/// disposal wait for it. Statements are prepared once when the session opens.
/// </summary>
internal sealed class BlockRepository : IBlockRepository
{
    /// <summary>Reads per read transaction in WAL mode when <see cref="BatchingOptions.ReadsPerTransaction"/> is not set.</summary>
    public const int DefaultReadsPerTransaction = 256;

    private readonly ISqliteConnection _connection;
    private readonly string _path;
    private readonly bool _readOnly;
    private readonly DisposeBehavior _onDispose;
    private readonly bool _wholeCalls;
    private readonly Action<BlockRepository> _onDisposed;
    private long _cacheHits;
    private long _cacheMisses;
    private readonly SessionGate _gate = new();
    private readonly WriteBatch _batch;
    private readonly BatchAgeTimer? _ageTimer;
    private readonly IBlockStore _store;
    private readonly BlocksetService _blocksets;
    private readonly VolumeGuard _volumeGuard;
    private readonly ISqliteStatement _counts;
    private readonly string _provider;
    private readonly Microsoft.Extensions.Logging.ILogger _logger;
    private int _calls;
    private VolumeService? _volumes;
    private CollectionService? _collect;

    public BlockRepository(ISqliteConnection connection, SessionSettings settings, Action<BlockRepository> onDisposed)
    {
        _connection = connection;
        _path = settings.Path;
        _provider = settings.Provider;
        _logger = settings.Logger;
        _readOnly = settings.ReadOnly;
        _onDispose = settings.Batching.OnDispose;
        _wholeCalls = settings.WholeCalls;
        _onDisposed = onDisposed;
        AppliedPragmas = settings.AppliedPragmas;
        // Read batching by default only in WAL mode: in the rollback-journal modes a held read blocks other writers' commits.
        var reads = settings.Batching.ReadsPerTransaction ?? (AppliedPragmas.JournalMode == JournalMode.Wal ? DefaultReadsPerTransaction : 1);
        _batch = new WriteBatch(connection, settings, reads);
        _volumeGuard = new VolumeGuard(connection, _batch);
        _store = settings.Layout.CreateStore(connection, _batch, _volumeGuard, settings.Strategy);
        _blocksets = new BlocksetService(connection, _batch, _store, _volumeGuard, settings.WholeCalls);
        _counts = connection.Prepare(BlockDbSql.Counts);
        var commitAge = _readOnly ? null : settings.Batching.CommitAfterMilliseconds;
        if (commitAge is not null || _batch.Reads.Enabled)
        {
            _ageTimer = new BatchAgeTimer(_gate, _batch, commitAge);
        }
    }

    public PragmaSettings AppliedPragmas { get; }

    public int PendingWrites => _batch.Pending;

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

    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        CallOnBlock(Text(hash), size, null, null, static (r, h, s, _) => r.Find(h, s), cancellationToken);

    public ValueTask<long?> FindBlockAsync(BlockHash hash, long size, CancellationToken cancellationToken = default) =>
        CallOnBlock(Bytes(hash), size, null, null, static (r, h, s, _) => r.Find(h, s), cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        CallOnBlock(Text(hash), size, null, nameof(InsertBlockAsync), static (r, h, s, v) => r._store.Insert(h, s, v), cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        CallOnBlock(Text(hash), size, null, nameof(SelectXorInsertAsync), static (r, h, s, v) => r._store.SelectXorInsert(h, s, v), cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default) =>
        CallOnBlock(Text(hash), size, volumeId, nameof(InsertBlockAsync), static (r, h, s, v) => r._store.Insert(h, s, v), cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default) =>
        CallOnBlock(Text(hash), size, volumeId, nameof(SelectXorInsertAsync), static (r, h, s, v) => r._store.SelectXorInsert(h, s, v), cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockHash hash, long size, long? volumeId = null, CancellationToken cancellationToken = default) =>
        CallOnBlock(Bytes(hash), size, volumeId, nameof(SelectXorInsertAsync), static (r, h, s, v) => r._store.SelectXorInsert(h, s, v), cancellationToken);

    public ValueTask<int> SelectXorInsertAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default) =>
        Call((blocks, results, volumeId, cancellationToken), static (r, s) =>
        {
            BlockBatchRules.Validate(s.blocks.Span, s.results.Length);
            return r.Writable(nameof(SelectXorInsertAsync)).SelectXorInsertMany(s.blocks, s.results, s.volumeId, s.cancellationToken);
        }, cancellationToken);

    public ValueTask<long> SelectXorInsertBlocksetAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default) =>
        Call((blocks, results, fullHash, volumeId, cancellationToken), static (r, s) =>
        {
            BlockBatchRules.Validate(s.blocks.Span, s.results.Length);
            return r.Writable(nameof(SelectXorInsertBlocksetAsync))._blocksets.SelectXorInsertAdd(
                s.blocks, s.results[..s.blocks.Length], s.volumeId, s.fullHash.IsEmpty ? null : s.fullHash.ToString(), s.cancellationToken);
        }, cancellationToken);

    public ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken = default) =>
        Read(blockId, static (r, id) => r._blocksets.GetBlock(id), cancellationToken);

    public ValueTask<long?> FindBlocksetAsync(string fullHash, long length, CancellationToken cancellationToken = default) =>
        Read((fullHash, length), static (r, s) =>
        {
            BlockHash.Validate(s.fullHash, nameof(fullHash));
            ArgumentOutOfRangeException.ThrowIfNegative(s.length, nameof(length));
            return r._blocksets.Find(s.fullHash, s.length);
        }, cancellationToken);

    public ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken = default) =>
        Read(volumeId, static (r, id) => r.Volumes.Get(id), cancellationToken);

    public ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken = default) =>
        Read(name, static (r, n) =>
        {
            VolumeRules.ValidateName(n);
            return r.Volumes.Find(n);
        }, cancellationToken);

    public ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        Call(blocksetId, static (r, id) =>
        {
            r.Writable(nameof(DeleteBlocksetAsync))._blocksets.Delete(id);
            return true;
        }, cancellationToken).Untyped();

    public ValueTask<CollectResult> DeleteUnreferencedBlocksAsync(long? volumeId = null, CancellationToken cancellationToken = default) =>
        Call(volumeId, static (r, v) => r.Collected((r.Writable(nameof(DeleteUnreferencedBlocksAsync))._collect ??= new CollectionService(r._connection, r._batch, r._volumeGuard)).Collect(v)), cancellationToken);

    private CollectResult Collected(CollectResult result)
    {
        if (result.Blocks > 0)
        {
            Log.Collected(_logger, result.Blocks, result.Bytes, _path);
        }

        return result;
    }

    public ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary, CancellationToken cancellationToken = default) =>
        Call((name, state), static (r, s) =>
        {
            VolumeRules.ValidateName(s.name);
            VolumeRules.ValidateNewState(s.state);
            return r.Writable(nameof(RegisterVolumeAsync)).Volumes.Register(s.name, s.state);
        }, cancellationToken);

    public ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size = null, CancellationToken cancellationToken = default) =>
        Call((volumeId, state, size), static (r, s) =>
        {
            VolumeRules.ValidateState(s.state);
            VolumeRules.ValidateSize(s.size);

            r.Writable(nameof(SetVolumeStateAsync)).Volumes.SetState(s.volumeId, s.state, s.size);
            return true;
        }, cancellationToken).Untyped();

    public ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken = default) =>
        Call((blockIds, toVolumeId, cancellationToken), static (r, s) =>
        {
            ArgumentNullException.ThrowIfNull(s.blockIds, nameof(blockIds));
            return r.Writable(nameof(MoveBlocksAsync)).Volumes.Move(s.blockIds, s.toVolumeId, s.cancellationToken);
        }, cancellationToken);

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

    /// <summary>
    /// A bulk import's blockset: found by full hash and length (then nothing is written), else added from its blocks by
    /// hash and size, inside the write transaction.
    /// </summary>
    internal ValueTask<bool> ImportBlocksetAsync(ImportBlockset blockset, long length, CancellationToken cancellationToken) =>
        Call((blockset, length, cancellationToken), static (r, s) =>
        {
            var fullHash = s.blockset.FullHash.IsEmpty ? null : s.blockset.FullHash.ToString();
            return r.Writable(nameof(IBlockDatabase.ImportBlocksetsAsync))._blocksets.Import(s.blockset.Blocks, fullHash, s.length, s.cancellationToken);
        }, cancellationToken);

    public ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        Read(blocksetId, static (r, id) => r._blocksets.List(id), cancellationToken);

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        Read(blocksetId, static (r, id) => r._blocksets.Get(id), cancellationToken);

    public ValueTask CommitAsync(CancellationToken cancellationToken = default) =>
        Call(static r => r._batch.Commit(), cancellationToken);

    public ValueTask RollbackAsync(CancellationToken cancellationToken = default) =>
        Call(static r => r._batch.Rollback(), cancellationToken);

    public ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default) =>
        Read(0, static (r, _) =>
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
    public ValueTask DisposeAsync() => _gate.CloseAsync(DisposeCore);

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
            StoreCacheStats();
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
    private ValueTask<TResult> Call<TState, TResult>(TState state, Func<BlockRepository, TState, TResult> operation, CancellationToken cancellationToken, [CallerMemberName] string name = "")
    {
        var started = Instruments.StartCall(ref _calls);
        Exception? failure = null;
        ValueTask<TResult> result;
        try
        {
            _gate.Enter(this, cancellationToken);
            _batch.CallCancellation = cancellationToken;
            try
            {
                _batch.ThrowDeferred();
                result = new(operation(this, state));
            }
            catch (Exception e) when (_batch.Lost(e) is { } lost)
            {
                throw lost;
            }
            catch
            {
                // A failed read does not keep its snapshot: the next read starts afresh.
                _batch.Reads.Abandon();
                throw;
            }
            finally
            {
                _batch.CallCancellation = default;
                _gate.Exit();
            }
        }
        catch (Exception e)
        {
            failure = e;
            result = ValueTask.FromException<TResult>(e);
            if (e is BlockDbException { SqliteErrorCode: SqliteResultCode.Busy })
            {
                Log.Busy(_logger, name, _path, e.Message);
            }
        }

        if (started != 0 || Instruments.Operations.Enabled)
        {
            Instruments.EndCall("sqlite", _provider, name, started, failure);
        }

        return result;
    }

    /// <summary>A call that only reads: it runs in the write transaction when one is open, else in the session's read batch.</summary>
    private ValueTask<TResult> Read<TState, TResult>(TState state, Func<BlockRepository, TState, TResult> read, CancellationToken cancellationToken, [CallerMemberName] string name = "") =>
        Call((state, read), static (r, s) =>
        {
            r._batch.EnterRead();
            return s.read(r, s.state);
        }, cancellationToken, name);

    private ValueTask Call(Action<BlockRepository> operation, CancellationToken cancellationToken, [CallerMemberName] string name = "") =>
        Call(operation, static (r, op) =>
        {
            op(r);
            return true;
        }, cancellationToken, name).Untyped();

    /// <summary>A call on one block: the hash and size checked, a write refused on a read-only database, then <paramref name="operation"/>.</summary>
    private ValueTask<TResult> CallOnBlock<TResult>(HashInput hash, long size, long? volumeId, string? write, Func<BlockRepository, HashInput, long, long?, TResult> operation, CancellationToken cancellationToken, [CallerMemberName] string name = "") =>
        Call((hash, size, volumeId, write, operation), static (r, s) =>
        {
            s.hash.Validate(nameof(hash));
            BlockHash.ValidateSize(s.size, nameof(size));
            if (s.write is not null)
            {
                r.Writable(s.write);
            }

            return s.operation(r, s.hash, s.size, s.volumeId);
        }, cancellationToken, name);

    /// <summary>A lookup, in the session's read batch unless its write transaction is open.</summary>
    private long? Find(in HashInput hash, long size)
    {
        _batch.EnterRead();
        return _store.Find(hash, size);
    }

    /// <summary>
    /// Select-xor-insert of each block in order, its result at the same index; the token checked between blocks. In a
    /// session of whole calls (<see cref="SessionSettings.WholeCalls"/>) the blocks are first looked up outside the write
    /// transaction when none is open (a call of known blocks takes no write lock, as separate calls would not), then
    /// the others go in one savepoint of the write transaction: all of them, or none when a block fails or the token is
    /// cancelled.
    /// </summary>
    private int SelectXorInsertMany(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, CancellationToken cancellationToken)
    {
        if (!_wholeCalls)
        {
            return new ManyBlocks(this, blocks, results, volumeId, cancellationToken, null, blocks.Length).Run();
        }

        var misses = ArrayPool<int>.Shared.Rent(Math.Max(1, blocks.Length));
        try
        {
            var count = FindUnlessWriting(blocks.Span, results.Span, misses, cancellationToken);
            return count == 0 ? 0 : _batch.Write(new ManyBlocks(this, blocks, results, volumeId, cancellationToken, misses, count), static many =>
            {
                var created = many.Self._batch.Whole(many, static m => m.Run());
                many.Self._batch.EndWrite(wrote: false);
                return created;
            });
        }
        finally
        {
            ArrayPool<int>.Shared.Return(misses);
        }
    }

    /// <summary>
    /// Outside a write transaction, fills the results of the blocks the index holds (in the session's read batch) and
    /// lists the positions of the others in <paramref name="misses"/>; inside one, lists every position (the store looks
    /// them up under the write lock). Returns how many it listed.
    /// </summary>
    private int FindUnlessWriting(ReadOnlySpan<BinaryBlockKey> blocks, Span<SelectXorInsertResult> results, int[] misses, CancellationToken cancellationToken)
    {
        var count = 0;
        var reading = !_batch.IsOpen;
        for (var i = 0; i < blocks.Length; i++)
        {
            if (reading)
            {
                BlockBatchRules.CheckCancellation(i, cancellationToken);
                if (Find(HashInput.FromBytes(blocks[i].Hash), blocks[i].Size) is { } id)
                {
                    results[i] = new SelectXorInsertResult(id, false);
                    continue;
                }
            }

            misses[count++] = i;
        }

        return count;
    }

    /// <summary>A many-block select-xor-insert's arguments, carried by value through the batch: the blocks at <see cref="Only"/>'s first <see cref="Count"/> positions, or all of them when it is null.</summary>
    private readonly record struct ManyBlocks(
        BlockRepository Self, ReadOnlyMemory<BinaryBlockKey> Blocks, Memory<SelectXorInsertResult> Results, long? VolumeId, CancellationToken CancellationToken, int[]? Only, int Count)
    {
        /// <summary>Select-xor-insert of each block, in order; how many it created.</summary>
        public int Run()
        {
            var blocks = Blocks.Span;
            var results = Results.Span;
            var created = 0;
            for (var n = 0; n < Count; n++)
            {
                BlockBatchRules.CheckCancellation(n, CancellationToken);
                var i = Only is null ? n : Only[n];
                var result = Self._store.SelectXorInsert(HashInput.FromBytes(blocks[i].Hash), blocks[i].Size, VolumeId);
                results[i] = result;
                created += result.Created ? 1 : 0;
            }

            return created;
        }
    }

    private static HashInput Text(string hash) => HashInput.FromText(hash);

    private static HashInput Bytes(in BlockHash hash) => HashInput.FromBytes(hash);

    /// <summary>The volume calls, prepared on first use.</summary>
    private VolumeService Volumes => _volumes ??= new VolumeService(_connection, _batch, _volumeGuard);

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
                throw new ArgumentException($"Block {i} of the blockset is invalid: hash {Quoted.Value(block.Hash)} ({block.Hash?.Length ?? 0:N0} characters), size {block.Size}; give a base64 hash with '=' padding and a size of 1 byte or more.", nameof(blocks));
            }
        }
    }

    private static int ValidateBlockset<T>(IReadOnlyList<T> blocks, string? fullHash)
    {
        ArgumentNullException.ThrowIfNull(blocks);
        if (fullHash is not null)
        {
            BlockHash.Validate(fullHash, nameof(fullHash));
        }

        return blocks.Count;
    }
}
