using System.Buffers;
using BlockDb.Engine;
using BlockDb.Volumes;

namespace BlockDb.Blocksets;

internal sealed partial class BlocksetService
{
    /// <summary>A one-call file's arguments, carried by value through the batch (<see cref="SelectXorInsertAdd"/>).</summary>
    private readonly record struct OneCallFile(
        BlocksetService Self, ReadOnlyMemory<BlockKey> Blocks, Memory<SelectXorInsertResult> Results, long? VolumeId, string? FullHash, CancellationToken CancellationToken)
    {
        /// <summary>Select-xor-inserts the blocks, then writes the blockset from them, in one transaction (commits come only between calls); the caller counts the write.</summary>
        public long Run()
        {
            var count = Blocks.Length;
            var ids = ArrayPool<long>.Shared.Rent(count);
            try
            {
                var length = SelectXorInsertBlocks(ids);
                // The keys matched these IDs by (hash, size) in this transaction: the layout's rules take them as the rows' own.
                return Self.WriteBlockset(ids, Blocks, count, length, FullHash, CancellationToken);
            }
            finally
            {
                ArrayPool<long>.Shared.Return(ids);
            }
        }

        /// <summary>Each block's select-xor-insert in this transaction, its ID into <paramref name="ids"/> and its result at the same index; the blockset's length.</summary>
        /// <remarks>
        /// The blocks the layout finds together (<see cref="Layouts.ILayoutSession.FindStoredInWrite"/>: KeyMap verifies its
        /// map hits many to a read) are found first; the rest are select-xor-inserted in order, so the IDs, the results and
        /// the inserts are those of one call per block.
        /// </remarks>
        private long SelectXorInsertBlocks(long[] ids)
        {
            var keys = Blocks.Span;
            var found = Results.Span;
            var volumes = ArrayPool<BlockVolume>.Shared.Rent(keys.Length);
            try
            {
                Array.Clear(ids, 0, keys.Length);
                Self._layout.FindStoredInWrite(keys, ids.AsSpan(0, keys.Length), volumes.AsSpan(0, keys.Length));
                return SelectXorInsertRest(keys, found, ids, volumes);
            }
            finally
            {
                ArrayPool<BlockVolume>.Shared.Return(volumes);
            }
        }

        private long SelectXorInsertRest(ReadOnlySpan<BlockKey> keys, Span<SelectXorInsertResult> found, long[] ids, BlockVolume[] volumes)
        {
            long length = 0;
            long? fit = null;
            for (var i = 0; i < keys.Length; i++)
            {
                Require.NotCancelled(i, CancellationToken);
                SelectXorInsertResult result;
                BlockVolume volume;
                if (ids[i] != 0)
                {
                    (result, volume) = (new SelectXorInsertResult(ids[i], false), volumes[i]);
                }
                else
                {
                    result = Self._layout.SelectXorInsertInWrite(keys[i], VolumeId, out volume);
                }

                found[i] = result;
                ids[i] = result.Id;
                Self.RequireReferable(result.Id, i, volume, ref fit);

                // The block matched (hash, size) in this transaction: its size is the key's.
                length = Require.BlocksetLength(length, keys[i].Size, i);
            }

            return length;
        }
    }
}
