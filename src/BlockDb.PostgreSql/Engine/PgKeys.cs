using BlockDb.Engine;
using BlockDb.PostgreSql.Blocksets;

namespace BlockDb.PostgreSql.Engine;

/// <summary>
/// A call's blocks as the server's parameters take them (<c>bytea</c> hashes, <c>bigint</c> sizes and IDs), after
/// <see cref="Require"/> checked them; and the errors a blockset refused by the server becomes.
/// </summary>
internal static class PgKeys
{
    /// <summary>Many blocks as two arrays (hash bytes, sizes) in order, with the sum of their sizes when <paramref name="forBlockset"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="forBlockset"/> and the sizes add up to more than <see cref="long.MaxValue"/> bytes.</exception>
    public static (byte[][] Hashes, long[] Sizes) Of(ReadOnlySpan<BlockKey> blocks, bool forBlockset)
    {
        var hashes = new byte[blocks.Length][];
        var sizes = new long[blocks.Length];
        long length = 0;
        for (var i = 0; i < blocks.Length; i++)
        {
            hashes[i] = blocks[i].Hash.Bytes.ToArray();
            sizes[i] = blocks[i].Size;
            if (forBlockset)
            {
                length = Require.BlocksetLength(length, sizes[i], i);
            }
        }

        return (hashes, sizes);
    }

    /// <summary>A blockset's block IDs as an array, in order; the token looked at between blocks.</summary>
    /// <exception cref="OperationCanceledException">Cancelled while reading the list.</exception>
    public static long[] Ids(IReadOnlyList<long> blockIds, CancellationToken cancellationToken)
    {
        var ids = new long[blockIds.Count];
        for (var i = 0; i < ids.Length; i++)
        {
            Require.NotCancelled(i, cancellationToken);
            ids[i] = blockIds[i];
        }

        cancellationToken.ThrowIfCancellationRequested();
        return ids;
    }

    /// <summary>Why a blockset was not written: a block it names is unknown, or lies in a volume being deleted (<paramref name="describe"/> names the block at a position).</summary>
    public static Exception Refused(BlocksetAdded added, Func<int, string> describe) => added switch
    {
        // A block in a volume being deleted first: the gathered insert skips the new blocks of such a blockset, so they are missing too.
        { InDeletedVolume: { } position } => new BlockDbConflictException($"Block {position} of the blockset ({describe(position)}) is in a volume that is being deleted; record the block again in a live volume (MoveBlocksAsync) before a blockset names it. Nothing of the blockset was written."),
        { Missing: { } position } => new BlockNotFoundException($"Block {position} of the blockset ({describe(position)}) is not in the index; nothing of the blockset was written.", position),
        _ => new BlockDbException("The blockset was neither written nor refused for a reason the server gave; nothing of it was written."),
    };
}
