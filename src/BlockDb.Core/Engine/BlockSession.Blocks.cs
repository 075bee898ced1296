namespace BlockDb.Engine;

// The block calls: find, insert and select-xor-insert of one block, and select-xor-insert of a span. A text hash is
// checked and decoded here, once; the engine takes the bytes.
internal sealed partial class BlockSession<TEngine>
{
    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        FindBlock(true, hash, default, size, cancellationToken);

    public ValueTask<long?> FindBlockAsync(BlockHash hash, long size, CancellationToken cancellationToken = default) =>
        FindBlock(false, null, hash, size, cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        InsertBlock(true, hash, default, size, null, cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default) =>
        InsertBlock(true, hash, default, size, volumeId, cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        SelectXorInsert(true, hash, default, size, null, cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default) =>
        SelectXorInsert(true, hash, default, size, volumeId, cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockHash hash, long size, long? volumeId = null, CancellationToken cancellationToken = default) =>
        SelectXorInsert(false, null, hash, size, volumeId, cancellationToken);

    /// <summary>A lookup, in the session's read transaction unless its write transaction is open.</summary>
    private ValueTask<long?> FindBlock(bool isText, string? text, in BlockHash hash, long size, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(FindBlockAsync));
        try
        {
            if (!call.TryEnter(this, cancellationToken))
            {
                return FindBlockLaterAsync(call.Hand(), isText, text, hash, size, cancellationToken);
            }

            var block = Require.Block(isText, text, hash, size);
            var running = _engine.FindBlockAsync(block, text, cancellationToken);
            return running.IsCompletedSuccessfully ? running : RestAsync(call.Hand(), running, write: false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long?>();
        }
    }

    /// <summary>A lookup that met background work (the age commit) in the gate: awaits it without blocking the thread [G1].</summary>
    private async ValueTask<long?> FindBlockLaterAsync(CallScope handed, bool isText, string? text, BlockHash hash, long size, CancellationToken cancellationToken)
    {
        using var call = handed;
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            var block = Require.Block(isText, text, hash, size);
            return await call.WhilePending(_engine.FindBlockAsync(block, text, cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    private ValueTask<SelectXorInsertResult> SelectXorInsert(bool isText, string? text, in BlockHash hash, long size, long? volumeId, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(SelectXorInsertAsync));
        try
        {
            if (!call.TryEnter(this, cancellationToken))
            {
                return SelectXorInsertLaterAsync(call.Hand(), isText, text, hash, size, volumeId, cancellationToken);
            }

            var block = Require.Block(isText, text, hash, size);
            RequireWritable(nameof(SelectXorInsertAsync));
            var running = _engine.SelectXorInsertAsync(block, text, volumeId, cancellationToken);
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
    private async ValueTask<SelectXorInsertResult> SelectXorInsertLaterAsync(CallScope handed, bool isText, string? text, BlockHash hash, long size, long? volumeId, CancellationToken cancellationToken)
    {
        using var call = handed;
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            var block = Require.Block(isText, text, hash, size);
            RequireWritable(nameof(SelectXorInsertAsync));
            var result = await call.WhilePending(_engine.SelectXorInsertAsync(block, text, volumeId, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            return result;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    private async ValueTask<long> InsertBlock(bool isText, string? text, BlockHash hash, long size, long? volumeId, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(InsertBlockAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            var block = Require.Block(isText, text, hash, size);
            RequireWritable(nameof(InsertBlockAsync));
            var id = await call.WhilePending(_engine.InsertBlockAsync(block, text, volumeId, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            return id;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<int> SelectXorInsertAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(SelectXorInsertAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.Blocks(blocks.Span, results.Length);
            RequireWritable(nameof(SelectXorInsertAsync));
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
