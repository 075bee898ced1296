using BlockDb.Layouts.Indexed;
using BlockDb.Sql;

namespace BlockDb.Blocksets;

// The reads: a blockset, its blocks, a block; outside a write transaction they run in the session's read transaction.
internal sealed partial class BlocksetService
{
    /// <summary>Up to <paramref name="into"/>'s length of a blockset's blocks from <paramref name="fromIndex"/> on, in order, hashes as bytes; how many.</summary>
    /// <exception cref="BlocksetNotFoundException">No blockset has that ID.</exception>
    public int List(long blocksetId, int fromIndex, Span<BlocksetBlock> into)
    {
        var list = _list;
        list.BindInt64(1, blocksetId);
        list.BindInt64(2, fromIndex);
        var count = 0;
        try
        {
            if (_listRows is { } rows)
            {
                // A layout that stores hash bytes, on a driver that reads a row in one call: the bytes as they are.
                Span<byte> hash = stackalloc byte[BlockHash.MaxBytes];
                while (count < into.Length && rows.StepBlockRow(out var index, out var id, hash, out var length, out var size))
                {
                    into[count++] = new BlocksetBlock((int)index, id, BlockKey.Stored(BlobHashCodec.Stored(hash, length), size));
                }
            }
            else
            {
                while (count < into.Length && list.Step())
                {
                    into[count++] = new BlocksetBlock((int)list.ColumnInt64(0), list.ColumnInt64(1), BlockKey.Stored(_layout.ReadBinaryHash(list, 2), list.ColumnInt64(3)));
                }
            }
        }
        finally
        {
            list.Reset();
        }

        if (count == 0)
        {
            // No entries from there on: past the end, an empty file's blockset, or no such blockset (Get throws the typed error).
            Get(blocksetId);
        }

        return count;
    }

    /// <summary>The lowest blockset ID with this full hash and length, or null.</summary>
    public long? Find(string fullHash, long length)
    {
        _find.BindText(1, fullHash);
        _find.BindInt64(2, length);
        try
        {
            return _find.Step() ? _find.ColumnInt64(0) : null;
        }
        finally
        {
            _find.Reset();
        }
    }

    /// <summary>A block by ID.</summary>
    /// <exception cref="BlockNotFoundException">No block has that ID.</exception>
    public BlockInfo GetBlock(long blockId)
    {
        _getBlock.BindInt64(1, blockId);
        try
        {
            return _getBlock.Step()
                ? new BlockInfo(blockId, BlockKey.Stored(_layout.ReadBinaryHash(_getBlock, 0), _getBlock.ColumnInt64(1)), _getBlock.ColumnIsNull(2) ? null : _getBlock.ColumnInt64(2))
                : throw new BlockNotFoundException(blockId);
        }
        finally
        {
            _getBlock.Reset();
        }
    }

    /// <summary>A blockset's length, full hash and entry count.</summary>
    /// <exception cref="BlocksetNotFoundException">No blockset has that ID.</exception>
    public BlocksetInfo Get(long blocksetId)
    {
        _getBlockset.BindInt64(1, blocksetId);
        try
        {
            return _getBlockset.Step()
                ? new BlocksetInfo(blocksetId, _getBlockset.ColumnInt64(0), _getBlockset.ColumnText(1), (int)_getBlockset.ColumnInt64(2))
                : throw new BlocksetNotFoundException(blocksetId);
        }
        finally
        {
            _getBlockset.Reset();
        }
    }
}
