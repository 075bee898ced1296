using BlockDb.Diagnostics;

namespace BlockDb.Engine;

// The blockset calls, block reads by ID, and garbage collection.
internal sealed partial class BlockSession<TEngine>
{
    public ValueTask<long> SelectXorInsertBlocksetAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(SelectXorInsertBlocksetAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.Blocks(blocks.Span, results.Length);
            RequireWritable(nameof(SelectXorInsertBlocksetAsync));
            var id = _engine.SelectXorInsertBlockset(blocks, results[..blocks.Length], fullHash.IsEmpty ? null : fullHash.ToString(), volumeId, cancellationToken);
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
            var id = _engine.AddBlockset(blocks, fullHash, cancellationToken);
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
            var id = _engine.AddBlockset(blockIds, fullHash, cancellationToken);
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
    public ValueTask<bool> ImportBlocksetAsync(ImportBlockset blockset, long length, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(ImportBlocksetAsync));
        try
        {
            call.Enter(this, cancellationToken);
            RequireWritable(nameof(IBlockDatabase.ImportBlocksetsAsync));
            var fullHash = blockset.FullHash.IsEmpty ? null : blockset.FullHash.ToString();
            var added = _engine.ImportBlockset(blockset.Blocks, fullHash, length, cancellationToken);
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
            return new(_engine.GetBlock(blockId));
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
            Require.FullHash(fullHash, length);
            return new(_engine.FindBlockset(fullHash, length));
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
            return new(_engine.ListBlocksetBlocks(blocksetId));
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
            return new(_engine.GetBlockset(blocksetId));
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
            _engine.DeleteBlockset(blocksetId);
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
            var result = _engine.Collect(volumeId);
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
