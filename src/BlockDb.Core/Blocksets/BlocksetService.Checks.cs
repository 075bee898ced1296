using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Volumes;

namespace BlockDb.Blocksets;

// The checks of a blockset's blocks inside the write transaction: each one there, its volume not going, the length in range.
internal sealed partial class BlocksetService
{
    private ISqliteStatement? _anyGoing;
    private (long Transaction, long Revision) _goingReadIn = (-1, -1);
    private bool _anyBlockInGoing;

    /// <summary>Refuses block <paramref name="position"/> when no block has its ID or its volume is going (the row read again).</summary>
    /// <exception cref="BlockNotFoundException">No block has that ID.</exception>
    /// <exception cref="BlockDbConflictException">The block's volume is Deleting or Deleted.</exception>
    private void RequireKnown(long id, int position)
    {
        if (BlockSize(id, position) is null)
        {
            throw new BlockNotFoundException($"Block {position} of the blockset (ID {id}) is not in the index. Nothing of the blockset was written.", position);
        }
    }

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
            RequireKnown(id, position);
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

    /// <summary>
    /// Whether some block is in a Deleting or Deleted volume, read once per (transaction, revision) of the session's write
    /// transaction, which must be open. For a bulk import: its session is its own (<see cref="Import.SessionImportTarget"/>,
    /// on no caller's connection) and holds SQLite's write lock from its <c>BEGIN IMMEDIATE</c> to its <c>COMMIT</c>, and
    /// the import changes no volume's state, so no block can enter a going volume, nor a volume start going, inside it
    /// (a change this session makes moves <see cref="Sqlite.SqliteTransaction.Revision"/> and is read again).
    /// </summary>
    private bool AnyBlockInGoingVolume()
    {
        var at = (_batch.Transaction, _batch.Revision);
        if (at != _goingReadIn)
        {
            var read = _anyGoing ??= _connection.Prepare(BlockDbSql.AnyBlockInGoingVolume);
            try
            {
                _anyBlockInGoing = read.Step() && read.ColumnInt64(0) != 0;
            }
            finally
            {
                read.Reset();
            }

            _goingReadIn = at;
        }

        return _anyBlockInGoing;
    }

    private static BlockDbConflictException Going(long id, int position) =>
        new($"Block {position} of the blockset (ID {id}) is in a volume that is being deleted; record the block again in a live volume (MoveBlocksAsync) before a blockset names it. Nothing of the blockset was written.");

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
