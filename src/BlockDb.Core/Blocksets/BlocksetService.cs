using System.Buffers;
using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Layouts;
using BlockDb.Sessions;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.Blocksets;

/// <summary>
/// A session's blockset reads and writes, the same for every layout: blocks are found through the layout's
/// <see cref="ILayoutSession"/>, and a blockset is written with its entries inside a savepoint (all of it or nothing).
/// Used only inside the session's gate.
/// </summary>
internal sealed partial class BlocksetService
{
    private readonly ISqliteConnection _connection;
    private readonly SqliteTransaction _batch;
    private readonly ILayoutSession _layout;
    private readonly VolumeGuard _volumes;
    private readonly ISqliteStatement _blockSize;
    private readonly ISqliteStatement _insertBlockset;
    private readonly ISqliteStatement _insertEntry;
    private ISqliteStatement? _insertEntries;
    private readonly ISqliteStatement _getBlockset;
    private readonly ISqliteStatement _list;
    private readonly ISqliteStatement _find;
    private readonly ISqliteStatement _deleteEntries;
    private readonly ISqliteStatement _delete;
    private readonly ISqliteStatement _getBlock;
    private readonly IdFloor? _floor;
    private readonly IBlocksetRules? _rules;
    private readonly bool _wholeCalls;
    private readonly bool _insertReturnsId;

    /// <summary>The layout's blockset rules, or null.</summary>
    internal IBlocksetRules? Rules => _rules;

    /// <summary>When the session closes: releases the layout's rules (their statements go with the connection).</summary>
    public void Close() => _rules?.Dispose();

    /// <param name="connection">The session's connection.</param>
    /// <param name="batch">The session's write batch.</param>
    /// <param name="layout">The layout's session (boxed once: the blockset calls are not the block hot path).</param>
    /// <param name="volumes">The session's volume checks.</param>
    /// <param name="wholeCalls">Whether a one-call file's blocks go in the same savepoint as its blockset (<see cref="SessionSettings.WholeCalls"/>).</param>
    /// <param name="sql">The layout's statements.</param>
    /// <param name="rules">The layout's own blockset rules, or null.</param>
    public BlocksetService(ISqliteConnection connection, SqliteTransaction batch, ILayoutSession layout, VolumeGuard volumes, bool wholeCalls, SessionSql sql, IBlocksetRules? rules)
    {
        _rules = rules;
        _wholeCalls = wholeCalls;
        _connection = connection;
        _batch = batch;
        _layout = layout;
        _volumes = volumes;
        _blockSize = connection.Prepare(BlockDbSql.GetBlockSizeAndVolumeState);
        _insertBlockset = connection.Prepare(sql.InsertBlockset);
        _insertReturnsId = sql.InsertBlocksetReturnsId;
        _insertEntry = connection.Prepare(BlockDbSql.InsertBlocksetEntry);
        _getBlockset = connection.Prepare(BlockDbSql.GetBlockset);
        _list = connection.Prepare(BlockDbSql.ListBlocksetBlocksFrom);
        _find = connection.Prepare(BlockDbSql.FindBlockset);
        _deleteEntries = connection.Prepare(BlockDbSql.DeleteBlocksetEntries);
        _delete = connection.Prepare(BlockDbSql.DeleteBlockset);
        _getBlock = connection.Prepare(sql.GetBlock);
        _floor = sql.BlocksetIdFloor is { } floor ? new IdFloor(connection, floor) : null;
    }

    /// <summary>
    /// A file in one call: select-xor-insert of each block (its result at the same index, new blocks recorded in
    /// <paramref name="volumeId"/>), then the blockset from them, all in one write transaction that no commit splits.
    /// Each block's ID, size and volume are those the layout session found or created in that transaction (a found block is
    /// one read with its volume's state, or KeyMap's verification with its VolumeID), so a block's row is read again only to
    /// refuse a going volume or for a block Duplicati took back; the layout's rules take the keys as matched. In a session of
    /// whole calls the blocks go in the blockset's savepoint too: a failure or a cancellation leaves none of them.
    /// </summary>
    /// <exception cref="BlockDbConflictException">A found block's volume is Deleting or Deleted; nothing of the blockset was written (blocks created before it stay in the batch, unless the session's calls are whole).</exception>
    public long SelectXorInsertAdd(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, string? fullHash, CancellationToken cancellationToken) =>
        _batch.Write(new OneCallFile(this, blocks, results, volumeId, fullHash, cancellationToken), static file =>
        {
            var blocksetId = file.Self._wholeCalls ? file.Self._batch.AllOrNothing(file, static f => f.Run()) : file.Run();
            file.Self._batch.Wrote();
            return blocksetId;
        });

    /// <summary>
    /// A bulk import's blockset: when it has a full hash and a blockset with that hash and length exists, nothing is
    /// written (false); else it is added from its blocks by hash and size (true). Decided inside the write transaction.
    /// </summary>
    public bool Import(IReadOnlyList<BlockKey> blocks, string? fullHash, long length, CancellationToken cancellationToken) =>
        _batch.Write((this, blocks, fullHash, length, cancellationToken), static s =>
        {
            var (self, blocks, fullHash, length, cancellationToken) = s;
            if (fullHash is not null && self.Find(fullHash, length) is not null)
            {
                return false;
            }

            self.Add(blocks, blocks.Count, fullHash, cancellationToken, static (BlocksetService self, IReadOnlyList<BlockKey> blocks, int i, ref long? _) =>
            {
                var block = blocks[i];
                var id = self._layout.Find(block)
                    ?? throw new BlockNotFoundException($"Block {i} of the blockset (hash {block.Hash}, {block.Size} bytes) is not in the index; import the blocks first. Nothing of the blockset was written.", i);
                return (id, self.BlockSize(id, i) ?? block.Size);
            });
            return true;
        });

    /// <summary>Deletes a blockset and its entries (all or nothing) and counts one write.</summary>
    /// <exception cref="BlocksetNotFoundException">No blockset has that ID; nothing was written.</exception>
    public void Delete(long blocksetId) => _batch.Write((this, blocksetId), static s =>
    {
        var (self, id) = s;
        self._batch.AllOrNothing((self, id), static d =>
        {
            d.self._rules?.Deleting(d.id);
            d.self._deleteEntries.BindInt64(1, d.id);
            d.self._deleteEntries.ExecuteNonQuery();
            d.self._delete.BindInt64(1, d.id);
            _ = d.self._delete.ExecuteNonQuery() > 0 ? true : throw new BlocksetNotFoundException(d.id);
            d.self._floor?.Raise(d.id); // the highest blockset's ID is never handed out again (BlockDbSql.IdFloorSql)
            return true;
        });
        self._batch.Wrote();
        return true;
    });

    /// <summary>Block <paramref name="i"/>'s ID and size, checked in the write transaction; <paramref name="fit"/> as <see cref="RequireReferable"/> takes it.</summary>
    private delegate (long Id, long Size) Resolve<TBlocks>(BlocksetService self, TBlocks blocks, int i, ref long? fit);

    /// <summary>Resolves each block to its ID and size inside the write transaction, then writes the blockset.</summary>
    private long Add<TBlocks>(TBlocks blocks, int count, string? fullHash, CancellationToken cancellationToken, Resolve<TBlocks> resolve) =>
        _batch.Write((this, blocks, count, fullHash, cancellationToken, resolve), static s =>
        {
            var (self, blocks, count, fullHash, cancellationToken, resolve) = s;
            var ids = ArrayPool<long>.Shared.Rent(count);
            try
            {
                long length = 0;
                long? fit = null;
                for (var i = 0; i < count; i++)
                {
                    Require.NotCancelled(i, cancellationToken);
                    (ids[i], var size) = resolve(self, blocks, i, ref fit);
                    length = AddLength(length, size, i);
                }

                var blocksetId = self.WriteBlockset(ids, default, count, length, fullHash, cancellationToken);
                self._batch.Wrote();
                return blocksetId;
            }
            finally
            {
                ArrayPool<long>.Shared.Return(ids);
            }
        });

    /// <summary>Block <paramref name="position"/>'s ID and size, checked.</summary>
    /// <exception cref="BlockNotFoundException">No block has that ID.</exception>
    private (long Id, long Size) Known(long id, int position) =>
        (id, BlockSize(id, position) ?? throw new BlockNotFoundException($"Block {position} of the blockset (ID {id}) is not in the index. Nothing of the blockset was written.", position));

    /// <summary>
    /// Refuses block <paramref name="position"/> of a one-call blockset when its volume is going, from what the layout
    /// read in this transaction: nothing to read for a block it created, one read of the volume's state for a block
    /// it found (none when the block has no volume or its volume is <paramref name="fit"/>, found fit earlier in this
    /// call; nothing changes a volume's state inside the call), and the row read again only when the layout session could not say.
    /// </summary>
    /// <exception cref="BlockDbConflictException">The block's volume is Deleting or Deleted.</exception>
    /// <exception cref="BlockNotFoundException">The layout session could not say and the block is not there.</exception>
    private void RequireReferable(long id, int position, BlockVolume volume, ref long? fit)
    {
        if (volume.IsChecked)
        {
            return;
        }

        if (volume.IsUnknown)
        {
            Known(id, position);
            return;
        }

        if (volume.VolumeId is not { } v || v == fit)
        {
            return;
        }

        if (_volumes.IsGoing(v))
        {
            throw Going(id, position);
        }

        fit = v;
    }

    private static BlockDbConflictException Going(long id, int position) =>
        new($"Block {position} of the blockset (ID {id}) is in a volume that is being deleted; record the block again in a live volume (MoveBlocksAsync) before a blockset names it. Nothing of the blockset was written.");

    /// <summary>The blockset's length so far plus block <paramref name="index"/>'s size, in bytes.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The length would pass <see cref="long.MaxValue"/> bytes.</exception>
    private static long AddLength(long length, long size, int index) =>
        length <= long.MaxValue - size
            ? length + size
            : throw new ArgumentOutOfRangeException("blocks", size, $"The blockset's length passes {long.MaxValue:N0} bytes at block {index} ({size:N0} bytes); a blockset's Length is the sum of its blocks' sizes and must fit a 64-bit integer. Nothing of the blockset was written.");

    /// <summary>
    /// Writes a blockset and its entries as one unit (all of it, or nothing: <see cref="SqliteTransaction.AllOrNothing"/>);
    /// the caller counts the write. <paramref name="keys"/>: the blocks' keys as matched to <paramref name="ids"/> in this
    /// transaction, for the layout's rules (no read by ID), or empty.
    /// </summary>
    private long WriteBlockset(long[] ids, ReadOnlyMemory<BlockKey> keys, int count, long length, string? fullHash, CancellationToken cancellationToken) =>
        _batch.AllOrNothing((this, ids, keys, count, length, fullHash, cancellationToken), static s =>
        {
            var (self, ids, keys, count, length, fullHash, cancellationToken) = s;
            self._rules?.Prepare(ids, keys.Span, count, length, fullHash);
            var insert = self._insertBlockset;
            insert.BindInt64(1, length);
            if (fullHash is null)
            {
                insert.BindNull(2);
            }
            else
            {
                insert.BindText(2, fullHash);
            }

            if (self.InsertBlockset() is not { } blocksetId)
            {
                // The layout's find-or-add (only a layout with rules inserts OR IGNORE): its unique (FullHash, Length)
                // holds the blockset already; nothing was written.
                return (self._rules is null ? null : self.Find(fullHash!, length))
                    ?? throw new InvalidOperationException($"The blockset insert wrote no row and no blockset has its full hash {fullHash} and length {length}.");
            }

            var i = 0;
            if (count >= BlockDbSql.EntriesPerInsert)
            {
                // Whole groups of entries in one statement each (prepared on first use): one step instead of sixteen.
                var entries = self._insertEntries ??= self._connection.Prepare(BlockDbSql.InsertBlocksetEntries);
                entries.BindInt64(1, blocksetId);
                for (; i + BlockDbSql.EntriesPerInsert <= count; i += BlockDbSql.EntriesPerInsert)
                {
                    entries.BindInt64(2, i);
                    for (var j = 0; j < BlockDbSql.EntriesPerInsert; j++)
                    {
                        Require.NotCancelled(i + j + 1, cancellationToken);
                        entries.BindInt64(3 + j, ids[i + j]);
                    }

                    entries.ExecuteNonQuery();
                }
            }

            var entry = self._insertEntry;
            entry.BindInt64(1, blocksetId);
            for (; i < count; i++)
            {
                Require.NotCancelled(i + 1, cancellationToken);
                entry.BindInt64(2, i);
                entry.BindInt64(3, ids[i]);
                entry.ExecuteNonQuery();
            }

            self._rules?.Written(blocksetId);
            return blocksetId;
        });

    /// <summary>Runs the bound blockset insert: the new ID, or null when it wrote no row (the layout's find-or-add found the blockset).</summary>
    private long? InsertBlockset()
    {
        var insert = _insertBlockset;
        if (!_insertReturnsId)
        {
            return insert.ExecuteNonQuery() == 0 ? null : _connection.LastInsertRowId;
        }

        try
        {
            return insert.Step() ? insert.ColumnInt64(0) : null;
        }
        finally
        {
            insert.Reset();
        }
    }

    /// <summary>A block's size, or null when it is unknown; a block of a volume being deleted cannot join a blockset.</summary>
    /// <exception cref="BlockDbConflictException">The block's volume is <see cref="VolumeState.Deleting"/> or <see cref="VolumeState.Deleted"/>.</exception>
    private long? BlockSize(long id, int position)
    {
        _blockSize.BindInt64(1, id);
        try
        {
            if (!_blockSize.Step())
            {
                return null;
            }

            if (VolumeGuard.IsGoingState(_blockSize, 1))
            {
                throw Going(id, position);
            }

            return _blockSize.ColumnInt64(0);
        }
        finally
        {
            _blockSize.Reset();
        }
    }
}
