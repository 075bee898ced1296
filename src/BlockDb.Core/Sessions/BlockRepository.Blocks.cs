using System.Buffers;
using BlockDb.Engine;
using BlockDb.Layouts;

namespace BlockDb.Sessions;

// The block calls: find, insert and select-xor-insert of one block, and select-xor-insert of a span.
internal sealed partial class BlockRepository
{
    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        FindBlock(HashInput.FromText(hash), size, cancellationToken);

    public ValueTask<long?> FindBlockAsync(BlockHash hash, long size, CancellationToken cancellationToken = default) =>
        FindBlock(HashInput.FromBytes(hash), size, cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        InsertBlock(HashInput.FromText(hash), size, null, cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default) =>
        InsertBlock(HashInput.FromText(hash), size, volumeId, cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        SelectXorInsert(HashInput.FromText(hash), size, null, cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default) =>
        SelectXorInsert(HashInput.FromText(hash), size, volumeId, cancellationToken);

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockHash hash, long size, long? volumeId = null, CancellationToken cancellationToken = default) =>
        SelectXorInsert(HashInput.FromBytes(hash), size, volumeId, cancellationToken);

    /// <summary>A lookup, in the session's read transaction unless its write transaction is open.</summary>
    private ValueTask<long?> FindBlock(in HashInput hash, long size, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(FindBlockAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.Block(hash, size);
            return new(Find(hash, size));
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long?>();
        }
    }

    private ValueTask<SelectXorInsertResult> SelectXorInsert(in HashInput hash, long size, long? volumeId, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(SelectXorInsertAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.Block(hash, size);
            RequireWritable(nameof(SelectXorInsertAsync));
            var result = _store.SelectXorInsert(hash, size, volumeId);
            _policy.AfterWrite();
            return new(result);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<SelectXorInsertResult>();
        }
    }

    private ValueTask<long> InsertBlock(in HashInput hash, long size, long? volumeId, CancellationToken cancellationToken)
    {
        using var call = new CallScope(_site, nameof(InsertBlockAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.Block(hash, size);
            RequireWritable(nameof(InsertBlockAsync));
            var id = _store.Insert(hash, size, volumeId);
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
            var created = SelectXorInsertMany(blocks, results, volumeId, cancellationToken);
            _policy.AfterWrite();
            return new(created);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<int>();
        }
    }

    private long? Find(in HashInput hash, long size)
    {
        _tx.EnterRead();
        return _store.Find(hash, size);
    }

    /// <summary>
    /// Select-xor-insert of each block in order, its result at the same index; the token checked between blocks; one
    /// transaction, committed after the call [B1]. In a session of whole calls (<see cref="SessionSettings.WholeCalls"/>)
    /// the blocks are first looked up outside the write transaction when none is open (a call of known blocks takes no
    /// write lock), then the others go in one savepoint: all of them, or none when a block fails or the token is cancelled.
    /// </summary>
    private int SelectXorInsertMany(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, CancellationToken cancellationToken)
    {
        if (!_wholeCalls)
        {
            return new ManyBlocks(this, blocks, results, volumeId, cancellationToken, null, blocks.Length).Run();
        }

        var misses = ArrayPool<int>.Shared.Rent(Math.Max(1, blocks.Length));
        try
        {
            var count = FindUnlessWriting(blocks.Span, results.Span, misses, cancellationToken);
            return count == 0 ? 0 : _tx.Write(new ManyBlocks(this, blocks, results, volumeId, cancellationToken, misses, count), static many =>
                many.Self._tx.InSavepoint(many, static m => m.Run()));
        }
        finally
        {
            ArrayPool<int>.Shared.Return(misses);
        }
    }

    /// <summary>
    /// Outside a write transaction, fills the results of the blocks the index holds (in the session's read transaction)
    /// and lists the positions of the others in <paramref name="misses"/>; inside one, lists every position (the store
    /// looks them up under the write lock). Returns how many it listed.
    /// </summary>
    private int FindUnlessWriting(ReadOnlySpan<BinaryBlockKey> blocks, Span<SelectXorInsertResult> results, int[] misses, CancellationToken cancellationToken)
    {
        var count = 0;
        var reading = !_tx.IsOpen;
        for (var i = 0; i < blocks.Length; i++)
        {
            if (reading)
            {
                Require.NotCancelled(i, cancellationToken);
                if (Find(HashInput.FromBytes(blocks[i].Hash), blocks[i].Size) is { } id)
                {
                    results[i] = new SelectXorInsertResult(id, false);
                    continue;
                }
            }

            misses[count++] = i;
        }

        return count;
    }

    /// <summary>A span select-xor-insert's arguments, carried by value: the blocks at <see cref="Only"/>'s first <see cref="Count"/> positions, or all of them when it is null.</summary>
    private readonly record struct ManyBlocks(
        BlockRepository Self, ReadOnlyMemory<BinaryBlockKey> Blocks, Memory<SelectXorInsertResult> Results, long? VolumeId, CancellationToken CancellationToken, int[]? Only, int Count)
    {
        /// <summary>Select-xor-insert of each block, in order; how many it created.</summary>
        public int Run()
        {
            var blocks = Blocks.Span;
            var results = Results.Span;
            var created = 0;
            for (var n = 0; n < Count; n++)
            {
                Require.NotCancelled(n, CancellationToken);
                var i = Only is null ? n : Only[n];
                var result = Self._store.SelectXorInsert(HashInput.FromBytes(blocks[i].Hash), blocks[i].Size, VolumeId);
                results[i] = result;
                created += result.Created ? 1 : 0;
            }

            return created;
        }
    }
}
