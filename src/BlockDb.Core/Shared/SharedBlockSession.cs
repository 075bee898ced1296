using BlockDb.Engine;

namespace BlockDb.Shared;

/// <summary>
/// The thread-safe session, one class for every engine (<see cref="ISharedBlockSession"/>): reads on sessions
/// lent by a <see cref="SessionPool"/> (<c>using var lease = await _readers.RentAsync(ct)</c>), writes as
/// <see cref="WriteRequest"/>s through the route the engine chose (<see cref="IWriteRoute"/>: SQLite's
/// <see cref="GroupCommitWriter"/>, PostgreSQL's <see cref="PooledWrites"/>), each acknowledged only after its commit
/// [S1]. Under SQLite a select-xor-insert looks the block up on a reader first, so a known block takes no write lock and
/// waits for no group commit.
/// </summary>
/// <remarks>
/// Invariants: once <c>_disposal</c> has begun no new call starts; <see cref="DisposeAsync"/> runs its work once (a
/// second, concurrent dispose waits for it: <see cref="DisposeOnce"/>), wakes waiting rents, lets taken writes commit
/// and reads in flight end, and leaves no call pending [S3]. The pool and the route are this shared session's alone.
/// </remarks>
internal sealed class SharedBlockSession : ISharedBlockSession
{
    private readonly SessionPool _readers;
    private readonly IWriteRoute _writes;
    private readonly bool _readFirst;
    private readonly Func<BlockDbReadOnlyException>? _readOnly;
    private readonly Action<SharedBlockSession> _onDisposed;
    private readonly DisposeOnce _disposal = new();

    /// <param name="readers">The sessions reads run on (on PostgreSQL the writes' sessions too); disposed by this shared session.</param>
    /// <param name="writes">The write route; disposed by this shared session.</param>
    /// <param name="readFirst">Whether a one-block select-xor-insert looks the block up on a reader before it writes (SQLite).</param>
    /// <param name="readOnly">The refusal of every write, made here before any work; null when writes are allowed or the route's sessions refuse them themselves.</param>
    /// <param name="onDisposed">Called once, at the end of dispose.</param>
    public SharedBlockSession(SessionPool readers, IWriteRoute writes, bool readFirst, Func<BlockDbReadOnlyException>? readOnly, Action<SharedBlockSession> onDisposed)
    {
        _readers = readers;
        _writes = writes;
        _readFirst = readFirst;
        _readOnly = readOnly;
        _onDisposed = onDisposed;
    }

    public long CommittedBatches => _writes.CommittedBatches;

    public long AcknowledgedWrites => _writes.AcknowledgedWrites;

    /// <summary>Writes waiting for the writer now (<c>blockdb.group_commit.queue_length</c>).</summary>
    internal int QueueLength => _writes.QueueLength;

    public ValueTask<long?> FindBlockAsync(BlockKey block, CancellationToken cancellationToken = default)
    {
        Require.Block(block);
        return FindAsync(block, cancellationToken);
    }

    /// <summary>A lookup on a reader session, the key checked already.</summary>
    private async ValueTask<long?> FindAsync(BlockKey block, CancellationToken cancellationToken)
    {
        using var lease = await _readers.RentAsync(cancellationToken).ConfigureAwait(false);
        return await lease.Session.FindBlockAsync(block, cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask<int> ListBlocksetBlocksAsync(long blocksetId, int fromIndex, Memory<BlocksetBlock> into, CancellationToken cancellationToken = default)
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

    public async ValueTask<long?> FindBlocksetAsync(BlockHash fullHash, long length, CancellationToken cancellationToken = default)
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

    public async ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockKey block, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        Require.Block(block);
        RequireWritable();
        if (_readFirst && await FindAsync(block, cancellationToken).ConfigureAwait(false) is { } id)
        {
            return new SelectXorInsertResult(id, false);
        }

        return await Write(new WriteRequest<SelectXorInsertResult>(WriteKind.SelectXorInsert, cancellationToken) { Block = block, VolumeId = volumeId }).ConfigureAwait(false);
    }

    public ValueTask<int> SelectXorInsertManyAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        Require.Blocks(blocks.Span, results.Length);
        return Write(new WriteRequest<int>(WriteKind.SelectXorInsertMany, cancellationToken) { Blocks = blocks, Results = results, VolumeId = volumeId });
    }

    public ValueTask<long> AddBlocksetAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        Require.Blocks(blocks.Span, results.Length);
        return Write(new WriteRequest<long>(WriteKind.AddBlockset, cancellationToken) { Blocks = blocks, Results = results, Hash = fullHash, VolumeId = volumeId });
    }

    public ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        Write(new WriteRequest<bool>(WriteKind.DeleteBlockset, cancellationToken) { Id = blocksetId }).Untyped();

    public ValueTask<CollectResult> DeleteUnreferencedBlocksAsync(long? volumeId = null, CancellationToken cancellationToken = default) =>
        Write(new WriteRequest<CollectResult>(WriteKind.Collect, cancellationToken) { VolumeId = volumeId });

    public ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary, CancellationToken cancellationToken = default) =>
        Write(new WriteRequest<long>(WriteKind.RegisterVolume, cancellationToken) { Text = name, State = state });

    public ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size = null, CancellationToken cancellationToken = default) =>
        Write(new WriteRequest<bool>(WriteKind.SetVolumeState, cancellationToken) { Id = volumeId, State = state, VolumeSize = size }).Untyped();

    public ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blockIds);
        return Write(new WriteRequest<long>(WriteKind.MoveBlocks, cancellationToken) { List = blockIds, Id = toVolumeId });
    }

    /// <summary>Stops taking calls, waits for taken writes to commit and reads in flight to end, then closes every connection [S3].</summary>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>Stops taking calls, waits for taken writes to commit and reads in flight to end, then closes every connection [S3]. A second, concurrent dispose waits for the same work.</summary>
    public ValueTask DisposeAsync() => _disposal.RunAsync(DisposeCoreAsync);

    private async ValueTask DisposeCoreAsync()
    {
        // Waiting rents are woken and leases drained while the writer commits what is queued [S3].
        var readers = _readers.DisposeAsync().AsTask();
        try
        {
            await _writes.DisposeAsync().ConfigureAwait(false);
        }
        finally
        {
            await readers.ConfigureAwait(false);
            _onDisposed(this);
        }
    }

    /// <summary>Hands a write to the route: refused when the token is cancelled, the shared session disposed [S3] or the database read-only.</summary>
    private ValueTask<TResult> Write<TResult>(WriteRequest<TResult> request)
    {
        if (request.CancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<TResult>(request.CancellationToken);
        }

        try
        {
            if (_disposal.Begun)
            {
                throw Errors.SharedDisposed();
            }

            RequireWritable();
        }
        catch (Exception e)
        {
            return ValueTask.FromException<TResult>(e);
        }

        return _writes.WriteAsync(request);
    }

    private void RequireWritable()
    {
        if (_readOnly is not null)
        {
            throw _readOnly();
        }
    }
}
