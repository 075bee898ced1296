using System.Buffers;
using BlockDb.Engine;
using BlockDb.Volumes;

namespace BlockDb.Blocksets;

// A bulk import's blockset: its blocks found inside the import transaction, then its rows with no savepoint of their own.
internal sealed partial class BlocksetService
{
    /// <summary>
    /// A bulk import's blockset: when it has a full hash and a blockset with that hash and length exists, nothing is
    /// written (false: what lets a re-run of an import resume, and skips a file listed twice); else it is added from its
    /// blocks by hash and size, each resolved inside the write transaction (true). Counts one write. The blocks the layout
    /// finds together are found first (<see cref="Layouts.ILayoutSession.FindStoredInWrite"/>: KeyMap verifies its map hits
    /// many to a read), the rest one by one. Each find matched the row's hash and size, so a block's size is its key's and
    /// the layout's rules take the keys as matched. A block of a volume being deleted is refused as in every blockset
    /// write, but the row is read again with its volume's state only when some going volume holds blocks
    /// (<see cref="AnyBlockInGoingVolume"/>, read once per import transaction).
    /// </summary>
    /// <exception cref="BlockNotFoundException">A block is not in the index; nothing of the blockset was written.</exception>
    /// <exception cref="BlockDbConflictException">A block's volume is Deleting or Deleted; nothing of the blockset was written.</exception>
    public bool Import(IReadOnlyList<BlockKey> blocks, string? fullHash, long length, CancellationToken cancellationToken)
    {
        _batch.Begin();
        if (fullHash is not null && Find(fullHash, length) is not null)
        {
            return false;
        }

        var count = blocks.Count;
        var checkVolumes = count > 0 && AnyBlockInGoingVolume();
        var ids = ArrayPool<long>.Shared.Rent(count);
        var keys = ArrayPool<BlockKey>.Shared.Rent(count);
        try
        {
            for (var i = 0; i < count; i++)
            {
                keys[i] = blocks[i];
            }

            Array.Clear(ids, 0, count);
            if (count >= StoredTogetherFrom)
            {
                var volumes = ArrayPool<BlockVolume>.Shared.Rent(count);
                _layout.FindStoredInWrite(keys.AsSpan(0, count), ids.AsSpan(0, count), volumes.AsSpan(0, count));
                ArrayPool<BlockVolume>.Shared.Return(volumes);
            }

            long sum = 0;
            for (var i = 0; i < count; i++)
            {
                Require.NotCancelled(i, cancellationToken);
                ref readonly var block = ref keys[i];
                if (ids[i] == 0)
                {
                    ids[i] = _layout.Find(block)
                        ?? throw new BlockNotFoundException($"Block {i} of the blockset (hash {block.Hash}, {block.Size} bytes) is not in the index; import the blocks first. Nothing of the blockset was written.", i);
                }

                sum = Require.BlocksetLength(sum, checkVolumes ? BlockSize(ids[i], i) ?? block.Size : block.Size, i);
            }

            // The keys matched these IDs by (hash, size) in this transaction: the layout's rules take them as the rows' own.
            // No savepoint: a failure or cancellation rolls the whole import transaction back (Import.SessionImportTarget).
            _rules?.Prepare(ids, keys.AsSpan(0, count), count, sum, fullHash);
            WriteRows(ids, count, sum, fullHash, cancellationToken);
            _batch.Wrote();
            return true;
        }
        finally
        {
            ArrayPool<long>.Shared.Return(ids);
            ArrayPool<BlockKey>.Shared.Return(keys, clearArray: true);
        }
    }

    /// <summary>
    /// Blocks from which a blockset's blocks are first found together: a file of one block takes its one find (a read
    /// of <see cref="Sql.BlockDbSql.VerifiedPerRead"/> places costs more than one read of one).
    /// </summary>
    private const int StoredTogetherFrom = 2;
}
