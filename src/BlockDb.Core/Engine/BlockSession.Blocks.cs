namespace BlockDb.Engine;

// The block calls: find and select-xor-insert of one block, and select-xor-insert of a span. The key's constructor
// checked its hash and size; here only default(BlockKey) is refused, and the engine takes the key as it is.
internal sealed partial class BlockSession<TEngine>
{
    /// <summary>A lookup, in the session's read transaction unless its write transaction is open.</summary>
    public ValueTask<long?> FindBlockAsync(BlockKey block, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(FindBlockAsync));
        try
        {
            if (!call.TryEnter(this, cancellationToken))
            {
                return FindBlockLaterAsync(call.Hand(), block, cancellationToken);
            }

            Require.Block(block);
            var running = _engine.FindBlockAsync(block, cancellationToken);
            return running.IsCompletedSuccessfully ? running : RestAsync(call.Hand(), running, write: false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long?>();
        }
    }

    /// <summary>A lookup that met background work (the age commit) in the gate: awaits it without blocking the thread [G1].</summary>
    private async ValueTask<long?> FindBlockLaterAsync(CallScope handed, BlockKey block, CancellationToken cancellationToken)
    {
        using var call = handed;
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.Block(block);
            return await call.WhilePending(_engine.FindBlockAsync(block, cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockKey block, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(SelectXorInsertAsync));
        try
        {
            if (!call.TryEnter(this, cancellationToken))
            {
                return SelectXorInsertLaterAsync(call.Hand(), block, volumeId, cancellationToken);
            }

            Require.Block(block);
            RequireWritable(nameof(SelectXorInsertAsync));
            var running = _engine.SelectXorInsertAsync(block, volumeId, cancellationToken);
            if (!running.IsCompletedSuccessfully)
            {
                return RestAsync(call.Hand(), running, write: true);
            }

            var committing = _policy.AfterWriteAsync();
            return committing.IsCompletedSuccessfully ? running : CommittingAsync(call.Hand(), committing, running.Result);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<SelectXorInsertResult>();
        }
    }

    /// <summary>A select-xor-insert that met background work (the age commit) in the gate: awaits it without blocking the thread [G1].</summary>
    private async ValueTask<SelectXorInsertResult> SelectXorInsertLaterAsync(CallScope handed, BlockKey block, long? volumeId, CancellationToken cancellationToken)
    {
        using var call = handed;
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.Block(block);
            RequireWritable(nameof(SelectXorInsertAsync));
            var result = await call.WhilePending(_engine.SelectXorInsertAsync(block, volumeId, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            return result;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<int> SelectXorInsertManyAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(SelectXorInsertManyAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.Blocks(blocks.Span, results.Length);
            RequireWritable(nameof(SelectXorInsertManyAsync));
            var created = await call.WhilePending(_engine.SelectXorInsertManyAsync(blocks, results, volumeId, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            return created;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    /// <summary>
    /// The rest of a hot call whose engine work completes later (PostgreSQL's round trip): awaited inside the handed
    /// scope, so the gate is held until it ends [G1]; then, for a write, the policy's commit [B1].
    /// </summary>
    private async ValueTask<T> RestAsync<T>(CallScope handed, ValueTask<T> running, bool write)
    {
        using var call = handed;
        try
        {
            var result = await running.ConfigureAwait(false);
            if (write)
            {
                await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            }

            return result;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    /// <summary>The rest of a hot write whose engine work completed but whose commit completes later (PostgreSQL).</summary>
    private async ValueTask<T> CommittingAsync<T>(CallScope handed, ValueTask committing, T result)
    {
        using var call = handed;
        try
        {
            await committing.ConfigureAwait(false);
            return result;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }
}
