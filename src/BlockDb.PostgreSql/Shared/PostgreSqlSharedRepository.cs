using BlockDb.Diagnostics;
using BlockDb.PostgreSql.Blocks;
using BlockDb.PostgreSql.Blocksets;
using BlockDb.Engine;
using BlockDb.PostgreSql.Engine;
using BlockDb.PostgreSql.Sessions;
using BlockDb.PostgreSql.Volumes;
using Npgsql;

namespace BlockDb.PostgreSql.Shared;

/// <summary>
/// The thread-safe repository on a server: every call runs on a connection of its own from the pool, in autocommit, so
/// a write completes once its own transaction has committed and concurrent writers are served by PostgreSQL's own
/// concurrency (row locks on the unique index, WAL flushes shared by concurrent commits). Measured faster than one
/// group-commit writer connection (docs/BENCHMARKS.md, "PostgreSQL"). See <see cref="ISharedBlockRepository"/>.
/// </summary>
/// <remarks>
/// <see cref="GroupCommitOptions.MaxReaders"/>, when set, bounds the connections it uses at once (reads and writes);
/// otherwise the pool's <c>Maximum Pool Size</c> does. Invariants: once <c>_disposal</c> has begun no call starts;
/// <see cref="DisposeAsync"/> waits for every call that started (<c>_inFlight</c>) and returns only when none is left.
/// </remarks>
internal sealed partial class PostgreSqlSharedRepository : ISharedBlockRepository
{
    private readonly PgContext _context;
    private readonly SemaphoreSlim? _slots;
    private readonly Action<PostgreSqlSharedRepository> _onDisposed;
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly DisposeOnce _disposal = new();
    private long _acknowledged;
    private int _inFlight = 1; // the repository's own reference, released by dispose
    private int _calls;

    public PostgreSqlSharedRepository(PgContext context, Action<PostgreSqlSharedRepository> onDisposed)
    {
        _context = context;
        _onDisposed = onDisposed;
        var limit = context.Options.GroupCommit.MaxReaders;
        _slots = limit > 0 ? new SemaphoreSlim(limit) : null;
    }

    /// <summary>Transactions committed: one per acknowledged write (each write commits on its own).</summary>
    public long CommittedBatches => Interlocked.Read(ref _acknowledged);

    public long AcknowledgedWrites => Interlocked.Read(ref _acknowledged);

    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        var key = PgKeys.Block(hash, size);
        return RunAsync(nameof(FindBlockAsync), (c, ct) => PgBlocks.FindAsync(c, null, key, size, ct), PgAccess.Read, cancellationToken);
    }

    public ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        RunAsync(nameof(ListBlocksetBlocksAsync), (c, ct) => PgBlocksets.ListAsync(c, null, blocksetId, ct), PgAccess.Read, cancellationToken);

    public ValueTask<int> ListBlocksetBlocksAsync(long blocksetId, int fromIndex, Memory<BinaryBlocksetBlock> into, CancellationToken cancellationToken = default)
    {
        Require.Listing(fromIndex, into.Length);
        return RunAsync(nameof(ListBlocksetBlocksAsync), (c, ct) => PgBlocksets.ListAsync(c, null, blocksetId, fromIndex, into, ct), PgAccess.Read, cancellationToken);
    }

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        RunAsync(nameof(GetBlocksetAsync), (c, ct) => PgBlocksets.GetBlocksetAsync(c, null, blocksetId, ct), PgAccess.Read, cancellationToken);

    public ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default) =>
        RunAsync(nameof(GetCountsAsync), (c, ct) => PgBlocks.CountsAsync(c, null, ct), PgAccess.Read, cancellationToken);

    public async ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        var key = PgKeys.Block(hash, size);
        _context.RequireWritable(nameof(InsertBlockAsync));
        var id = await RunAsync(nameof(InsertBlockAsync), (c, ct) => PgBlocks.InsertAsync(c, null, key, size, ct), PgAccess.Write, cancellationToken).ConfigureAwait(false);
        return Acknowledge(id ?? throw PgContext.BlockExists(hash, size));
    }

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        SelectXorInsertCoreAsync(PgKeys.Block(hash, size), size, null, cancellationToken);

    public ValueTask<long?> FindBlockAsync(BlockHash hash, long size, CancellationToken cancellationToken = default)
    {
        var key = PgKeys.Block(hash, size);
        return RunAsync(nameof(FindBlockAsync), (c, ct) => PgBlocks.FindAsync(c, null, key, size, ct), PgAccess.Read, cancellationToken);
    }

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockHash hash, long size, long? volumeId = null, CancellationToken cancellationToken = default) =>
        SelectXorInsertCoreAsync(PgKeys.Block(hash, size), size, volumeId, cancellationToken);

    public async ValueTask<int> SelectXorInsertAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        Require.Blocks(blocks.Span, results.Length);
        var (hashes, sizes) = PgKeys.Of(blocks.Span, forBlockset: false);
        _context.RequireWritable(nameof(SelectXorInsertAsync));
        if (hashes.Length == 0)
        {
            cancellationToken.ThrowIfCancellationRequested();
            return 0;
        }

        var readFirst = _context.Options.SelectXorInsert == SelectXorInsertStrategy.SelectThenInsert;
        var outcome = await RunAsync(
            nameof(SelectXorInsertAsync),
            async (c, ct) => readFirst && await PgBlocks.FindManyAsync(c, null, hashes, sizes, ct).ConfigureAwait(false) is { AllFound: true } found
                ? found
                : await PgBlocks.InsertManyAsync(c, null, hashes, sizes, volumeId, blockset: false, fullHash: null, ct).ConfigureAwait(false),
            PgAccess.RepeatableWrite,
            cancellationToken).ConfigureAwait(false);
        AcknowledgeWrites(outcome.Writes);
        return outcome.Fill(results.Span, volumeId, hashes, sizes);
    }

    public async ValueTask<long> SelectXorInsertBlocksetAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        Require.Blocks(blocks.Span, results.Length);
        var (hashes, sizes) = PgKeys.Of(blocks.Span, forBlockset: true);
        var full = fullHash.IsEmpty ? null : fullHash.Bytes.ToArray();
        _context.RequireWritable(nameof(SelectXorInsertBlocksetAsync));

        // One round trip, one implicit transaction: the blocks, their IDs and the blockset (PgBlocks.InsertManyAsync).
        // Not run again after a lost connection: the blockset may have committed.
        var outcome = await RunAsync(
            nameof(SelectXorInsertBlocksetAsync),
            (c, ct) => PgBlocks.InsertManyAsync(c, null, hashes, sizes, volumeId, blockset: true, full, ct),
            PgAccess.Write,
            cancellationToken).ConfigureAwait(false);
        AcknowledgeWrites(outcome.Writes);
        outcome.Fill(results.Span, volumeId, hashes, sizes);
        var added = outcome.Blockset!.Value;
        return added.Id ?? throw PgKeys.Refused(added, i => $"hash {Convert.ToBase64String(hashes[i])}, size {sizes[i]}");
    }

    public async ValueTask<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        Require.Blockset(blocks, fullHash);
        var full = PgKeys.FullHash(fullHash);
        var (hashes, sizes) = PgKeys.Of(blocks, cancellationToken);
        _context.RequireWritable(nameof(AddBlocksetAsync));
        var added = await RunAsync(nameof(AddBlocksetAsync), (c, ct) => PgBlocksets.AddBlocksetAsync(c, null, hashes, sizes, full, ct), PgAccess.Write, cancellationToken).ConfigureAwait(false);
        return Acknowledge(added.Id ?? throw PgKeys.Refused(added, i => blocks[i].ToString()));
    }

    public async ValueTask<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        Require.Blockset(blockIds, fullHash);
        var full = PgKeys.FullHash(fullHash);
        var ids = PgKeys.Ids(blockIds, cancellationToken);
        _context.RequireWritable(nameof(AddBlocksetAsync));
        var added = await RunAsync(nameof(AddBlocksetAsync), (c, ct) => PgBlocksets.AddBlocksetAsync(c, null, ids, full, ct), PgAccess.Write, cancellationToken).ConfigureAwait(false);
        return Acknowledge(added.Id ?? throw PgKeys.Refused(added, i => $"ID {ids[i]}"));
    }

    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>Refuses new calls, waits for every call in flight to end, then returns; a second dispose waits the same way.</summary>
    public ValueTask DisposeAsync() => _disposal.RunAsync(() =>
    {
        Release();
        return new ValueTask(_drained.Task);
    });

    private long Acknowledge(long id)
    {
        Interlocked.Increment(ref _acknowledged);
        return id;
    }

    /// <summary>Counts the writes of a call that made several (one per new block, one per blockset).</summary>
    private void AcknowledgeWrites(int writes)
    {
        if (writes > 0)
        {
            Interlocked.Add(ref _acknowledged, writes);
        }
    }

    /// <summary>Select-xor-insert of one block (its hash bytes checked already), with or without a volume, on one pooled connection.</summary>
    private async ValueTask<SelectXorInsertResult> SelectXorInsertCoreAsync(byte[] key, long size, long? volumeId, CancellationToken cancellationToken)
    {
        _context.RequireWritable(nameof(SelectXorInsertAsync));
        var strategy = _context.Options.SelectXorInsert;
        if (volumeId is { } volume)
        {
            if (strategy == SelectXorInsertStrategy.SelectThenInsert
                && await RunAsync(nameof(SelectXorInsertAsync), (c, ct) => PgBlocks.FindAsync(c, null, key, size, ct), PgAccess.Read, cancellationToken).ConfigureAwait(false) is { } found)
            {
                return new SelectXorInsertResult(found, false);
            }

            var (id, created, state) = await RunAsync(nameof(SelectXorInsertAsync), (c, ct) => PgBlocks.InsertInVolumeAsync(c, null, key, size, volume, thenFind: true, ct), PgAccess.RepeatableWrite, cancellationToken).ConfigureAwait(false);
            if (id is not { } known)
            {
                throw PgVolumes.Unrecordable(volume, state) ?? new BlockDbException($"The block (hash {Convert.ToBase64String(key)}, size {size}) was neither inserted nor found; was it deleted meanwhile?");
            }

            AcknowledgeWrites(created ? 1 : 0);
            return new SelectXorInsertResult(known, created);
        }

        var result = await RunAsync(
            nameof(SelectXorInsertAsync),
            async (c, ct) => strategy == SelectXorInsertStrategy.SelectThenInsert && await PgBlocks.FindAsync(c, null, key, size, ct).ConfigureAwait(false) is { } found
                ? new SelectXorInsertResult(found, false)
                : await PgBlocks.InsertThenSelectAsync(c, null, strategy != SelectXorInsertStrategy.InsertOrIgnoreThenSelect, key, size, ct).ConfigureAwait(false),
            PgAccess.RepeatableWrite,
            cancellationToken).ConfigureAwait(false);
        AcknowledgeWrites(result.Created ? 1 : 0);
        return result;
    }

    /// <summary>
    /// One call on a pooled connection: refused after dispose, counted in flight, mapped errors, and what
    /// <paramref name="access"/> says about cancellation and a lost connection (<see cref="PgRetry.RunAsync"/>).
    /// </summary>
    private async ValueTask<T> RunAsync<T>(string operation, Func<NpgsqlConnection, CancellationToken, Task<T>> statement, PgAccess access, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        Interlocked.Increment(ref _inFlight);
        var started = Instruments.StartCall(ref _calls);
        Exception? failure = null;
        try
        {
            if (_disposal.Begun)
            {
                throw new ObjectDisposedException(nameof(ISharedBlockRepository), "The shared BlockDb repository was disposed; this call did not run.");
            }

            if (_slots is not null)
            {
                await _slots.WaitAsync(cancellationToken).ConfigureAwait(false);
            }

            try
            {
                return await PgRetry.RunAsync(_context.DataSource, operation, statement, access, cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                _slots?.Release();
            }
        }
        catch (Exception e)
        {
            failure = e;
            throw;
        }
        finally
        {
            Instruments.EndCall("postgresql", _context.ProviderName, operation, started, failure);
            Release();
        }
    }

    private void Release()
    {
        if (Interlocked.Decrement(ref _inFlight) == 0)
        {
            _onDisposed(this);
            _drained.TrySetResult();
        }
    }
}
