using BlockDb.Diagnostics;

namespace BlockDb.Engine;

// The blockset calls, block reads by ID, and garbage collection.
internal sealed partial class BlockSession<TEngine>
{
    public async ValueTask<long> AddBlocksetAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(AddBlocksetAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.Blocks(blocks.Span, results.Length);
            RequireWritable(nameof(AddBlocksetAsync));
            var id = await call.WhilePending(_engine.AddBlocksetAsync(blocks, results[..blocks.Length], fullHash, volumeId, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            return id;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    /// <summary>
    /// A bulk import's blockset: found by full hash and length (then nothing is written), else added from its blocks by
    /// hash and size, inside the write transaction.
    /// </summary>
    public async ValueTask<bool> ImportBlocksetAsync(ImportBlockset blockset, long length, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(ImportBlocksetAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            RequireWritable(nameof(IBlockDatabase.ImportBlocksetsAsync));
            var fullHash = blockset.FullHash.IsEmpty ? null : blockset.FullHash.ToString();
            var added = await call.WhilePending(_engine.ImportBlocksetAsync(blockset.Blocks, fullHash, length, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            return added;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(GetBlockAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            return await call.WhilePending(_engine.GetBlockAsync(blockId, cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<long?> FindBlocksetAsync(BlockHash fullHash, long length, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(FindBlocksetAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.FullHash(fullHash, length);
            return await call.WhilePending(_engine.FindBlocksetAsync(fullHash, length, cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<int> ListBlocksetBlocksAsync(long blocksetId, int fromIndex, Memory<BlocksetBlock> into, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(ListBlocksetBlocksAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.Listing(fromIndex, into.Length);
            return await call.WhilePending(_engine.ListBlocksetBlocksAsync(blocksetId, fromIndex, into, cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(GetBlocksetAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            return await call.WhilePending(_engine.GetBlocksetAsync(blocksetId, cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(DeleteBlocksetAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            RequireWritable(nameof(DeleteBlocksetAsync));
            await call.WhilePending(_engine.DeleteBlocksetAsync(blocksetId, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<CollectResult> DeleteUnreferencedBlocksAsync(long? volumeId = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(DeleteUnreferencedBlocksAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            RequireWritable(nameof(DeleteUnreferencedBlocksAsync));
            var result = await call.WhilePending(_engine.CollectAsync(volumeId, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            if (result.Blocks > 0)
            {
                Log.Collected(_site.Logger, result.Blocks, result.Bytes, _site.Path);
            }

            return result;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }
}
