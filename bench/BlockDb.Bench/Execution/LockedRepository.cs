namespace BlockDb.Bench.Execution;

/// <summary>
/// One session shared by several threads behind a <see cref="Lock"/> (seed 001's "shared connection"): each
/// call runs inside the lock. BlockDb's ValueTasks complete before they are returned, so the work is done
/// when the lock is released; a ValueTask that is not complete would be a bug and throws.
/// </summary>
internal sealed class LockedRepository(IBlockRepository inner) : IBlockRepository
{
    private readonly Lock _gate = new();

    public PragmaSettings AppliedPragmas => inner.AppliedPragmas;

    public int PendingWrites => inner.PendingWrites;

    public SqliteCacheStats? ReadCacheStats() => inner.ReadCacheStats();

    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.FindBlockAsync(hash, size, cancellationToken));
        }
    }

    public ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.InsertBlockAsync(hash, size, cancellationToken));
        }
    }

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.SelectXorInsertAsync(hash, size, cancellationToken));
        }
    }

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.AddBlocksetAsync(blocks, fullHash, cancellationToken));
        }
    }

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.AddBlocksetAsync(blockIds, fullHash, cancellationToken));
        }
    }

    public ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            return Done(inner.ListBlocksetBlocksAsync(blocksetId, cancellationToken));
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
}
