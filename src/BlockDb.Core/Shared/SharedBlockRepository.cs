using BlockDb.Engine;
using BlockDb.Sqlite;

namespace BlockDb.Shared;

/// <summary>
/// The thread-safe repository: a <see cref="GroupCommitWriter"/> for the writes and a <see cref="SessionPool"/> of reader
/// sessions for the reads, both owned by it alone. See <see cref="ISharedBlockRepository"/>.
/// </summary>
/// <remarks>
/// Invariants: once <c>_disposal</c> has begun no new call starts; <see cref="DisposeAsync"/> runs its work once (a
/// second, concurrent dispose waits for it: <see cref="DisposeOnce"/>), lets queued writes commit and reads in flight
/// end, and leaves no call pending.
/// </remarks>
internal sealed class SharedBlockRepository : ISharedBlockRepository
{
    private static readonly BatchingOptions WriterBatching = new() { CommitEvery = 0, CommitAfterMilliseconds = null, OnDispose = DisposeBehavior.Rollback };

    private readonly SqliteDatabase _database;
    private readonly Action<SharedBlockRepository> _onDisposed;
    private readonly GroupCommitWriter _writer;
    private readonly SessionPool _readers;
    private readonly DisposeOnce _disposal = new();

    public SharedBlockRepository(SqliteDatabase database, GroupCommitOptions options, Action<SharedBlockRepository> onDisposed)
    {
        _database = database;
        _onDisposed = onDisposed;
        // Whole calls: a write that fails or is cancelled leaves nothing in the group's transaction (ISharedBlockRepository).
        _writer = new GroupCommitWriter(database.OpenSession(WriterBatching, register: false, wholeCalls: true), options, database.Tags);
        // Readers never write (no write batching, no commit age); they batch their reads as the database's options say.
        var configured = database.Options.Batching;
        var readerBatching = new BatchingOptions
        {
            CommitEvery = 1,
            CommitAfterMilliseconds = null,
            OnDispose = DisposeBehavior.Rollback,
            ReadsPerTransaction = configured.ReadsPerTransaction,
            ReadTransactionMilliseconds = configured.ReadTransactionMilliseconds,
        };
        _readers = new SessionPool(
            () => database.OpenSession(readerBatching, register: false),
            options.MaxReaders > 0 ? options.MaxReaders : 2 * Environment.ProcessorCount);
    }

    public long CommittedBatches => _writer.CommittedBatches;

    public long AcknowledgedWrites => _writer.AcknowledgedWrites;

    /// <summary>Writes waiting for the writer loop now (<c>blockdb.group_commit.queue_length</c>).</summary>
    internal int QueueLength => _writer.QueueLength;

    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
        return FindAsync(hash, default, size, cancellationToken);
    }

    public async ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await lease.Session.ListBlocksetBlocksAsync(blocksetId, cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask<int> ListBlocksetBlocksAsync(long blocksetId, int fromIndex, Memory<BinaryBlocksetBlock> into, CancellationToken cancellationToken = default)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await lease.Session.ListBlocksetBlocksAsync(blocksetId, fromIndex, into, cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await lease.Session.GetBlocksetAsync(blocksetId, cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await lease.Session.GetCountsAsync(cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken = default)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await lease.Session.GetBlockAsync(blockId, cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask<long?> FindBlocksetAsync(string fullHash, long length, CancellationToken cancellationToken = default)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await lease.Session.FindBlocksetAsync(fullHash, length, cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken = default)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await lease.Session.GetVolumeAsync(volumeId, cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken = default)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await lease.Session.FindVolumeAsync(name, cancellationToken).ConfigureAwait(false);
    }

    public ValueTask<long> InsertBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
        return Enqueue(static (w, s, ct) => w.InsertBlockAsync(s.hash, s.size, s.volumeId, ct), (hash, size, volumeId), cancellationToken);
    }

    public async ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default)
    {
        ThrowIfReadOnly();
        if (await FindBlockAsync(hash, size, cancellationToken).ConfigureAwait(false) is { } id)
        {
            return new SelectXorInsertResult(id, false);
        }

        return await Enqueue(static (w, s, ct) => w.SelectXorInsertAsync(s.hash, s.size, s.volumeId, ct), (hash, size, volumeId), cancellationToken).ConfigureAwait(false);
    }

    public ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        Enqueue(static (w, id, ct) => Done(w.DeleteBlocksetAsync(id, ct)), blocksetId, cancellationToken).Untyped();

    public ValueTask<CollectResult> DeleteUnreferencedBlocksAsync(long? volumeId = null, CancellationToken cancellationToken = default) =>
        Enqueue(static (w, v, ct) => w.DeleteUnreferencedBlocksAsync(v, ct), volumeId, cancellationToken);

    public ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary, CancellationToken cancellationToken = default) =>
        Enqueue(static (w, s, ct) => w.RegisterVolumeAsync(s.name, s.state, ct), (name, state), cancellationToken);

    public ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size = null, CancellationToken cancellationToken = default) =>
        Enqueue(static (w, s, ct) => Done(w.SetVolumeStateAsync(s.volumeId, s.state, s.size, ct)), (volumeId, state, size), cancellationToken).Untyped();

    public ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blockIds);
        return Enqueue(static (w, s, ct) => w.MoveBlocksAsync(s.blockIds, s.toVolumeId, ct), (blockIds, toVolumeId), cancellationToken);
    }

    public ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
        return Enqueue(static (w, s, ct) => w.InsertBlockAsync(s.hash, s.size, ct), (hash, size), cancellationToken);
    }

    public async ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        ThrowIfReadOnly();
        if (await FindBlockAsync(hash, size, cancellationToken).ConfigureAwait(false) is { } id)
        {
            return new SelectXorInsertResult(id, false);
        }

        return await Enqueue(static (w, s, ct) => w.SelectXorInsertAsync(s.hash, s.size, ct), (hash, size), cancellationToken).ConfigureAwait(false);
    }

    public ValueTask<long?> FindBlockAsync(BlockHash hash, long size, CancellationToken cancellationToken = default)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
        return FindAsync(null, hash, size, cancellationToken);
    }

    /// <summary>A lookup on a reader session, the hash checked already (text when <paramref name="text"/> is set, else <paramref name="hash"/>).</summary>
    private async ValueTask<long?> FindAsync(string? text, BlockHash hash, long size, CancellationToken cancellationToken)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await (text is null
            ? lease.Session.FindBlockAsync(hash, size, cancellationToken)
            : lease.Session.FindBlockAsync(text, size, cancellationToken)).ConfigureAwait(false);
    }

    public async ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockHash hash, long size, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        ThrowIfReadOnly();
        if (await FindBlockAsync(hash, size, cancellationToken).ConfigureAwait(false) is { } id)
        {
            return new SelectXorInsertResult(id, false);
        }

        return await Enqueue(static (w, s, ct) => w.SelectXorInsertAsync(s.hash, s.size, s.volumeId, ct), (hash, size, volumeId), cancellationToken).ConfigureAwait(false);
    }

    public ValueTask<int> SelectXorInsertAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        Require.Blocks(blocks.Span, results.Length);
        return Enqueue(static (w, s, ct) => w.SelectXorInsertAsync(s.blocks, s.results, s.volumeId, ct), (blocks, results, volumeId), cancellationToken);
    }

    public ValueTask<long> SelectXorInsertBlocksetAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        Require.Blocks(blocks.Span, results.Length);
        return Enqueue(static (w, s, ct) => w.SelectXorInsertBlocksetAsync(s.blocks, s.results, s.fullHash, s.volumeId, ct), (blocks, results, fullHash, volumeId), cancellationToken);
    }

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blocks);
        return Enqueue(static (w, s, ct) => w.AddBlocksetAsync(s.blocks, s.fullHash, ct), (blocks, fullHash), cancellationToken);
    }

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blockIds);
        return Enqueue(static (w, s, ct) => w.AddBlocksetAsync(s.blockIds, s.fullHash, ct), (blockIds, fullHash), cancellationToken);
    }

    /// <summary>Stops taking calls, waits for queued writes to commit and reads in flight to end, then closes every connection.</summary>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>Stops taking calls, waits for queued writes to commit and reads in flight to end, then closes every connection. A second, concurrent dispose waits for the same work.</summary>
    public ValueTask DisposeAsync() => _disposal.RunAsync(DisposeCoreAsync);

    /// <summary>A writer call without a result as one with a result, for the queue (the writer session completes synchronously).</summary>
    private static ValueTask<bool> Done(ValueTask call)
    {
        call.GetAwaiter().GetResult();
        return new(true);
    }

    /// <summary>The error of a call made on, or woken by, a disposed shared repository.</summary>
    internal static ObjectDisposedException Disposed() =>
        new(nameof(ISharedBlockRepository), "The shared BlockDb repository was disposed; this call did not run.");

    private async ValueTask DisposeCoreAsync()
    {
        // Readers are woken and drained while the writer commits what is queued.
        var readers = _readers.DisposeAsync().AsTask();
        try
        {
            await _writer.DisposeAsync().ConfigureAwait(false);
        }
        finally
        {
            await readers.ConfigureAwait(false);
            _onDisposed(this);
        }
    }

    private ValueTask<TResult> Enqueue<TState, TResult>(
        Func<ISessionHandle, TState, CancellationToken, ValueTask<TResult>> write, TState state, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<TResult>(cancellationToken);
        }

        try
        {
            if (_disposal.Begun)
            {
                throw Disposed();
            }

            ThrowIfReadOnly();
        }
        catch (Exception e)
        {
            return ValueTask.FromException<TResult>(e);
        }

        return _writer.EnqueueAsync(write, state, cancellationToken);
    }

    private void ThrowIfReadOnly()
    {
        if (_database.ReadOnly)
        {
            throw new BlockDbReadOnlyException("a write of the shared repository", _database.DataSource);
        }
    }
}
