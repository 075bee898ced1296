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
            call.Enter(this, cancellationToken);
            var block = Require.Block(isText, text, hash, size);
            return new(_engine.FindBlock(block, text));
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long?>();
        }
    }

    private ValueTask<SelectXorInsertResult> SelectXorInsert(bool isText, string? text, in BlockHash hash, long size, long? volumeId, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(SelectXorInsertAsync));
        try
        {
            call.Enter(this, cancellationToken);
            var block = Require.Block(isText, text, hash, size);
            RequireWritable(nameof(SelectXorInsertAsync));
            var result = _engine.SelectXorInsert(block, text, volumeId);
            _policy.AfterWrite();
            return new(result);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<SelectXorInsertResult>();
        }
    }

    private ValueTask<long> InsertBlock(bool isText, string? text, in BlockHash hash, long size, long? volumeId, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(InsertBlockAsync));
        try
        {
            call.Enter(this, cancellationToken);
            var block = Require.Block(isText, text, hash, size);
            RequireWritable(nameof(InsertBlockAsync));
            var id = _engine.InsertBlock(block, text, volumeId);
            _policy.AfterWrite();
            return new(id);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long>();
        }
    }

    public ValueTask<int> SelectXorInsertAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(SelectXorInsertAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.Blocks(blocks.Span, results.Length);
            RequireWritable(nameof(SelectXorInsertAsync));
            var created = _engine.SelectXorInsertMany(blocks, results, volumeId, cancellationToken);
            _policy.AfterWrite();
            return new(created);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<int>();
        }
    }
}
