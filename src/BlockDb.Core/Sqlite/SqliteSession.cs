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
    long? IEngineSession.FindBlock(in BinaryBlockKey block, string? text)
    {
        Tx.EnterRead();
        return _layout.Find(block, text);
    }

    SelectXorInsertResult IEngineSession.SelectXorInsert(in BinaryBlockKey block, string? text, long? volumeId) => _layout.SelectXorInsert(block, text, volumeId);

    long IEngineSession.InsertBlock(in BinaryBlockKey block, string? text, long? volumeId) => _layout.Insert(block, text, volumeId);

    /// <summary>
    /// Select-xor-insert of each block in order, its result at the same index; the token checked between blocks; one
    /// transaction, committed after the call [B1]. In a session of whole calls (<see cref="Sessions.SessionSettings.WholeCalls"/>)
    /// the blocks are first looked up outside the write transaction when none is open (a call of known blocks takes no
    /// write lock), then the others go in one savepoint: all of them, or none when a block fails or the token is cancelled.
    /// </summary>
    public int SelectXorInsertMany(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, CancellationToken cancellationToken)
    {
        _s.Settings.Layout.RequireNewBlocks(blocks.Span, volumeId);
        if (!_s.Settings.WholeCalls)
        {
            return new ManyBlocks(_layout, blocks, results, volumeId, cancellationToken, null, blocks.Length).Run();
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
            return Tx.InSavepoint(new ManyBlocks(_layout, blocks, results, volumeId, cancellationToken, misses, count), static m => m.Run());
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
    private int FindUnlessWriting(ReadOnlySpan<BinaryBlockKey> blocks, Span<SelectXorInsertResult> results, int[] misses, CancellationToken cancellationToken)
    {
        var count = 0;
        var reading = !Tx.IsOpen;
        for (var i = 0; i < blocks.Length; i++)
        {
            if (reading)
            {
                Require.NotCancelled(i, cancellationToken);
                Tx.EnterRead();
                if (_layout.Find(blocks[i], null) is { } id)
                {
                    results[i] = new SelectXorInsertResult(id, false);
                    continue;
                }
            }

            misses[count++] = i;
        }

        return count;
    }

    public long SelectXorInsertBlockset(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, string? fullHash, long? volumeId, CancellationToken cancellationToken)
    {
        _s.Settings.Layout.RequireNewBlocks(blocks.Span, volumeId);
        return _blocksets.SelectXorInsertAdd(blocks, results, volumeId, fullHash, cancellationToken);
    }

    public long AddBlockset(IReadOnlyList<BlockKey> blocks, string? fullHash, CancellationToken cancellationToken) =>
        _blocksets.Add(blocks, fullHash, cancellationToken);

    public long AddBlockset(IReadOnlyList<long> blockIds, string? fullHash, CancellationToken cancellationToken) =>
        _blocksets.Add(blockIds, fullHash, cancellationToken);

    public bool ImportBlockset(IReadOnlyList<BinaryBlockKey> blocks, string? fullHash, long length, CancellationToken cancellationToken) =>
        _blocksets.Import(blocks, fullHash, length, cancellationToken);

    public BlockInfo GetBlock(long blockId)
    {
        Tx.EnterRead();
        return _blocksets.GetBlock(blockId);
    }

    public long? FindBlockset(string fullHash, long length)
    {
        Tx.EnterRead();
        return _blocksets.Find(fullHash, length);
    }

    public BlocksetInfo GetBlockset(long blocksetId)
    {
        Tx.EnterRead();
        return _blocksets.Get(blocksetId);
    }

    public IReadOnlyList<BlocksetBlock> ListBlocksetBlocks(long blocksetId)
    {
        Tx.EnterRead();
        return _blocksets.List(blocksetId);
    }

    public void DeleteBlockset(long blocksetId) => _blocksets.Delete(blocksetId);

    public CollectResult Collect(long? volumeId) => _s.Collection.Collect(volumeId);

    public long RegisterVolume(string name, VolumeState state) => _s.Volumes.Register(name, state);

    public void SetVolumeState(long volumeId, VolumeState state, long? size) => _s.Volumes.SetState(volumeId, state, size);

    public long MoveBlocks(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken) =>
        _s.Volumes.Move(blockIds, toVolumeId, cancellationToken);

    public VolumeInfo GetVolume(long volumeId)
    {
        Tx.EnterRead();
        return _s.Volumes.Get(volumeId);
    }

    public VolumeInfo? FindVolume(string name)
    {
        Tx.EnterRead();
        return _s.Volumes.Find(name);
    }

    public BlockDbCounts GetCounts()
    {
        Tx.EnterRead();
        var counts = _s.Counts;
        try
        {
            counts.Step();
            return new BlockDbCounts(counts.ColumnInt64(0), counts.ColumnInt64(1), counts.ColumnInt64(2));
        }
        finally
        {
            counts.Reset();
        }
    }

    public void Commit() => Tx.Commit();

    public void Rollback() => Tx.Rollback();

    public SqliteCacheStats? ReadCacheStats() => _s.Connection.ReadCacheStats();

    public void Close()
    {
        try
        {
            _blocksets.Close();
        }
        finally
        {
            _s.Connection.Dispose();
        }
    }

    /// <summary>A span select-xor-insert's arguments, carried by value: the blocks at <see cref="Only"/>'s first <see cref="Count"/> positions, or all of them when it is null.</summary>
    private readonly record struct ManyBlocks(
        TLayout Layout, ReadOnlyMemory<BinaryBlockKey> Blocks, Memory<SelectXorInsertResult> Results, long? VolumeId, CancellationToken CancellationToken, int[]? Only, int Count)
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
                var result = Layout.SelectXorInsert(blocks[i], null, VolumeId);
                results[i] = result;
                created += result.Created ? 1 : 0;
            }

            return created;
        }
    }
}
