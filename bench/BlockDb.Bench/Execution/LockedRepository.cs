namespace BlockDb.Bench.Execution;

/// <summary>
/// One session shared by several threads behind a <see cref="Lock"/> (seed 001's "shared connection"): each
/// call runs inside the lock. BlockDb's ValueTasks complete before they are returned, so the work is done
/// when the lock is released; a ValueTask that is not complete would be a bug and throws.
/// </summary>
internal sealed class LockedRepository(IBlockSession inner) : IBlockSession
{
    private readonly Lock _gate = new();

    public int PendingWrites => inner.PendingWrites;

    public ValueTask<long?> FindBlockAsync(BlockKey block, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.FindBlockAsync(block, cancellationToken));
        }
    }

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockKey block, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.SelectXorInsertAsync(block, volumeId, cancellationToken));
        }
    }

    public ValueTask<int> SelectXorInsertManyAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.SelectXorInsertManyAsync(blocks, results, volumeId, cancellationToken));
        }
    }

    public ValueTask<long> AddBlocksetAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.AddBlocksetAsync(blocks, results, fullHash, volumeId, cancellationToken));
        }
    }

    public ValueTask<int> ListBlocksetBlocksAsync(long blocksetId, int fromIndex, Memory<BlocksetBlock> into, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.ListBlocksetBlocksAsync(blocksetId, fromIndex, into, cancellationToken));
        }
    }

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.GetBlocksetAsync(blocksetId, cancellationToken));
        }
    }

    public ValueTask CommitAsync(CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            var task = inner.CommitAsync(cancellationToken);
            return task.IsCompleted ? task : throw NotCompleted();
        }
    }

    public ValueTask RollbackAsync(CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            var task = inner.RollbackAsync(cancellationToken);
            return task.IsCompleted ? task : throw NotCompleted();
        }
    }

    public ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.GetCountsAsync(cancellationToken));
        }
    }

    public void Dispose() => inner.Dispose();

    public ValueTask DisposeAsync() => inner.DisposeAsync();

    private static ValueTask<T> Done<T>(ValueTask<T> task) => task.IsCompleted ? task : throw NotCompleted();

    private static InvalidOperationException NotCompleted() =>
        new("A BlockDb ValueTask did not complete synchronously; the shared-connection lock cannot cover it.");

    // The lifecycle calls: not used by the workloads, each run inside the lock like the others.
    public ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken = default) =>
        Locked(r => r.GetBlockAsync(blockId, cancellationToken));

    public ValueTask<long?> FindBlocksetAsync(BlockHash fullHash, long length, CancellationToken cancellationToken = default) =>
        Locked(r => r.FindBlocksetAsync(fullHash, length, cancellationToken));

    public ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken = default) =>
        Locked(r => r.GetVolumeAsync(volumeId, cancellationToken));

    public ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken = default) =>
        Locked(r => r.FindVolumeAsync(name, cancellationToken));

    public ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        new(Locked(async r =>
        {
            await r.DeleteBlocksetAsync(blocksetId, cancellationToken);
            return true;
        }).AsTask());

    public ValueTask<CollectResult> DeleteUnreferencedBlocksAsync(long? volumeId = null, CancellationToken cancellationToken = default) =>
        Locked(r => r.DeleteUnreferencedBlocksAsync(volumeId, cancellationToken));

    public ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary, CancellationToken cancellationToken = default) =>
        Locked(r => r.RegisterVolumeAsync(name, state, cancellationToken));

    public ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size = null, CancellationToken cancellationToken = default) =>
        new(Locked(async r =>
        {
            await r.SetVolumeStateAsync(volumeId, state, size, cancellationToken);
            return true;
        }).AsTask());

    public ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken = default) =>
        Locked(r => r.MoveBlocksAsync(blockIds, toVolumeId, cancellationToken));

    private ValueTask<T> Locked<T>(Func<IBlockSession, ValueTask<T>> call)
    {
        lock (_gate)
        {
            return Done(call(inner));
        }
    }
}
