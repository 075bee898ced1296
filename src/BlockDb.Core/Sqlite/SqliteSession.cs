using System.Buffers;
using BlockDb.Blocksets;
using BlockDb.Engine;
using BlockDb.Layouts;

namespace BlockDb.Sqlite;

/// <summary>
/// The SQLite engine of one session (<see cref="IEngineSession"/>): the block calls go to the layout's session
/// <typeparamref name="TLayout"/> (a struct, called directly), the rest to the services every layout shares. Reads run in
/// the session's read transaction unless its write transaction is open [R1].
/// </summary>
internal readonly struct SqliteSession<TLayout> : IEngineSession
    where TLayout : struct, ILayoutSession
{
    private readonly SqliteServices _s;
    private readonly TLayout _layout;
    private readonly BlocksetService _blocksets;

    public SqliteSession(SqliteServices services, TLayout layout)
    {
        _s = services;
        _layout = layout;
        _blocksets = services.Blocksets(layout);
    }

    private SqliteTransaction Tx => _s.Transaction;

    // The members that take a block `in` are explicit: an implicit one gets a compiler bridge (one more frame).
    // Every member completes synchronously: a value in a ValueTask (no allocation), a failure thrown.
    ValueTask<long?> IEngineSession.FindBlockAsync(in BlockKey block, CancellationToken _)
    {
        Tx.EnterRead();
        return new(_layout.Find(block));
    }

    ValueTask<SelectXorInsertResult> IEngineSession.SelectXorInsertAsync(in BlockKey block, long? volumeId, CancellationToken _) =>
        new(_layout.SelectXorInsert(block, volumeId));

    /// <summary>
    /// Select-xor-insert of each block in order, its result at the same index; the token checked between blocks; one
    /// transaction, committed after the call [B1]. The call is whole: when no write transaction is open the blocks are
    /// first looked up in the read transaction (a call of known blocks takes no write lock), then the others go in one
    /// savepoint (<see cref="SqliteTransaction.AllOrNothing"/>): all of them, or none when a block fails or the token is
    /// cancelled, so a caller who reads nothing from a call that threw never misses a block it created. A bulk import's
    /// session takes no savepoint: its whole transaction is the unit.
    /// </summary>
    public ValueTask<int> SelectXorInsertManyAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, CancellationToken cancellationToken) =>
        new(SelectXorInsertMany(blocks, results, volumeId, cancellationToken));

    private int SelectXorInsertMany(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, CancellationToken cancellationToken)
    {
        _s.Settings.Layout.RequireNewBlocks(blocks.Span, volumeId);
        if (Tx.External)
        {
            // The call's step savepoint first: it is the call's unit [X1] (a block's own select-xor-insert would open a
            // step without one, for a single write), and every block is looked up under it.
            Tx.Begin();
        }

        var misses = ArrayPool<int>.Shared.Rent(Math.Max(1, blocks.Length));
        try
        {
            var count = FindUnlessWriting(blocks.Span, results.Span, misses, cancellationToken);
            if (count == 0)
            {
                return 0;
            }

            Tx.Begin();
            var many = new ManyBlocks(_layout, blocks, results, volumeId, cancellationToken, misses, count);

            // A bulk import's transaction is already all or nothing (a failure or cancellation rolls the whole import
            // transaction back, Import/SessionImportTarget), so a savepoint per call would only copy every page the
            // call writes into its sub-journal: one random index page per new block on the indexed layouts.
            return _s.Settings.BulkImport ? many.Run() : Tx.AllOrNothing(many, static m => m.Run());
        }
        finally
        {
            ArrayPool<int>.Shared.Return(misses);
        }
    }

    /// <summary>
    /// Outside a write transaction, fills the results of the blocks the index holds (in the session's read transaction)
    /// and lists the positions of the others in <paramref name="misses"/>; inside one, lists every position (the layout
    /// looks them up under the write lock). Returns how many it listed.
    /// </summary>
    private int FindUnlessWriting(ReadOnlySpan<BlockKey> blocks, Span<SelectXorInsertResult> results, int[] misses, CancellationToken cancellationToken)
    {
        var count = 0;
        var reading = !Tx.IsOpen;
        for (var i = 0; i < blocks.Length; i++)
        {
            if (reading)
            {
                Require.NotCancelled(i, cancellationToken);
                Tx.EnterRead();
                if (_layout.Find(blocks[i]) is { } id)
                {
                    results[i] = new SelectXorInsertResult(id, false);
                    continue;
                }
            }

            misses[count++] = i;
        }

        return count;
    }

    public ValueTask<long> AddBlocksetAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash, long? volumeId, CancellationToken cancellationToken)
    {
        _s.Settings.Layout.RequireNewBlocks(blocks.Span, volumeId);
        return new(_blocksets.SelectXorInsertAdd(blocks, results, volumeId, fullHash.IsEmpty ? null : fullHash.ToString(), cancellationToken));
    }

    public ValueTask<bool> ImportBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash, long length, CancellationToken cancellationToken) =>
        new(_blocksets.Import(blocks, fullHash, length, cancellationToken));

    public ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken)
    {
        Tx.EnterRead();
        return new(_blocksets.GetBlock(blockId));
    }

    public ValueTask<long?> FindBlocksetAsync(BlockHash fullHash, long length, CancellationToken cancellationToken)
    {
        Tx.EnterRead();
        return new(_blocksets.Find(fullHash.ToString(), length));
    }

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken)
    {
        Tx.EnterRead();
        return new(_blocksets.Get(blocksetId));
    }

    public ValueTask<int> ListBlocksetBlocksAsync(long blocksetId, int fromIndex, Memory<BlocksetBlock> into, CancellationToken cancellationToken)
    {
        Tx.EnterRead();
        return new(_blocksets.List(blocksetId, fromIndex, into.Span));
    }

    public ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken)
    {
        _blocksets.Delete(blocksetId);
        return ValueTask.CompletedTask;
    }

    public ValueTask<CollectResult> CollectAsync(long? volumeId, CancellationToken cancellationToken) => new(_s.Collection.Collect(volumeId));

    public ValueTask<long> RegisterVolumeAsync(string name, VolumeState state, CancellationToken cancellationToken) => new(_s.Volumes.Register(name, state));

    public ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size, CancellationToken cancellationToken)
    {
        _s.Volumes.SetState(volumeId, state, size);
        return ValueTask.CompletedTask;
    }

    public ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken) =>
        new(_s.Volumes.Move(blockIds, toVolumeId, cancellationToken));

    public ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken)
    {
        Tx.EnterRead();
        return new(_s.Volumes.Get(volumeId));
    }

    public ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken)
    {
        Tx.EnterRead();
        return new(_s.Volumes.Find(name));
    }

    public ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken)
    {
        Tx.EnterRead();
        var counts = _s.Counts;
        try
        {
            counts.Step();
            return new(new BlockDbCounts(counts.ColumnInt64(0), counts.ColumnInt64(1), counts.ColumnInt64(2)));
        }
        finally
        {
            counts.Reset();
        }
    }

    public ValueTask CommitAsync() => Tx.CommitAsync();

    public ValueTask RollbackAsync() => Tx.RollbackAsync();

    public SqliteCacheStats? ReadCacheStats() => _s.Connection.ReadCacheStats();

    public ValueTask CloseAsync()
    {
        try
        {
            _blocksets.Close();
        }
        finally
        {
            _s.Connection.Dispose();
        }

        return ValueTask.CompletedTask;
    }

    /// <summary>A span select-xor-insert's arguments, carried by value: the blocks at <see cref="Only"/>'s first <see cref="Count"/> positions, or all of them when it is null.</summary>
    private readonly record struct ManyBlocks(
        TLayout Layout, ReadOnlyMemory<BlockKey> Blocks, Memory<SelectXorInsertResult> Results, long? VolumeId, CancellationToken CancellationToken, int[]? Only, int Count)
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
                var result = Layout.SelectXorInsert(blocks[i], VolumeId);
                results[i] = result;
                created += result.Created ? 1 : 0;
            }

            return created;
        }
    }
}
