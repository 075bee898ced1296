using BlockDb.Collection;
using BlockDb.Diagnostics;
using BlockDb.Engine;

namespace BlockDb.Sessions;

// The blockset calls, block reads by ID, and garbage collection.
internal sealed partial class BlockRepository
{
    public ValueTask<long> SelectXorInsertBlocksetAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(SelectXorInsertBlocksetAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.Blocks(blocks.Span, results.Length);
            RequireWritable(nameof(SelectXorInsertBlocksetAsync));
            var id = _blocksets.SelectXorInsertAdd(blocks, results[..blocks.Length], volumeId, fullHash.IsEmpty ? null : fullHash.ToString(), cancellationToken);
            _policy.AfterWrite();
            return new(id);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long>();
        }
    }

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(AddBlocksetAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.Blockset(blocks, fullHash);
            RequireWritable(nameof(AddBlocksetAsync));
            var id = _blocksets.Add(blocks, fullHash, cancellationToken);
            _policy.AfterWrite();
            return new(id);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long>();
        }
    }

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(AddBlocksetAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.Blockset(blockIds, fullHash);
            RequireWritable(nameof(AddBlocksetAsync));
            var id = _blocksets.Add(blockIds, fullHash, cancellationToken);
            _policy.AfterWrite();
            return new(id);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long>();
        }
    }

    /// <summary>
    /// A bulk import's blockset: found by full hash and length (then nothing is written), else added from its blocks by
    /// hash and size, inside the write transaction.
    /// </summary>
    internal ValueTask<bool> ImportBlocksetAsync(ImportBlockset blockset, long length, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(ImportBlocksetAsync));
        try
        {
            call.Enter(this, cancellationToken);
            RequireWritable(nameof(IBlockDatabase.ImportBlocksetsAsync));
            var fullHash = blockset.FullHash.IsEmpty ? null : blockset.FullHash.ToString();
            var added = _blocksets.Import(blockset.Blocks, fullHash, length, cancellationToken);
            _policy.AfterWrite();
            return new(added);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<bool>();
        }
    }

    public ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(GetBlockAsync));
        try
        {
            call.Enter(this, cancellationToken);
            _tx.EnterRead();
            return new(_blocksets.GetBlock(blockId));
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<BlockInfo>();
        }
    }

    public ValueTask<long?> FindBlocksetAsync(string fullHash, long length, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(FindBlocksetAsync));
        try
        {
            call.Enter(this, cancellationToken);
            _tx.EnterRead();
            Require.FullHash(fullHash, length);
            return new(_blocksets.Find(fullHash, length));
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long?>();
        }
    }

    public ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(ListBlocksetBlocksAsync));
        try
        {
            call.Enter(this, cancellationToken);
            _tx.EnterRead();
            return new(_blocksets.List(blocksetId));
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<IReadOnlyList<BlocksetBlock>>();
        }
    }

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(GetBlocksetAsync));
        try
        {
            call.Enter(this, cancellationToken);
            _tx.EnterRead();
            return new(_blocksets.Get(blocksetId));
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<BlocksetInfo>();
        }
    }

    public ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(DeleteBlocksetAsync));
        try
        {
            call.Enter(this, cancellationToken);
            RequireWritable(nameof(DeleteBlocksetAsync));
            _blocksets.Delete(blocksetId);
            _policy.AfterWrite();
            return ValueTask.CompletedTask;
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed();
        }
    }

    public ValueTask<CollectResult> DeleteUnreferencedBlocksAsync(long? volumeId = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(DeleteUnreferencedBlocksAsync));
        try
        {
            call.Enter(this, cancellationToken);
            RequireWritable(nameof(DeleteUnreferencedBlocksAsync));
            var result = (_collect ??= new CollectionService(_connection, _tx, _volumeGuard)).Collect(volumeId);
            _policy.AfterWrite();
            if (result.Blocks > 0)
            {
                Log.Collected(_logger, result.Blocks, result.Bytes, _path);
            }

            return new(result);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<CollectResult>();
        }
    }
}
