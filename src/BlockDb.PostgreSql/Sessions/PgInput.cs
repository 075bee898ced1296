
using BlockDb.Engine;
using BlockDb.PostgreSql.Blocksets;

namespace BlockDb.PostgreSql.Sessions;

/// <summary>
/// Validates and decodes what a caller passes, before anything reaches the server: hashes as canonical padded base64
/// (<see cref="BlockHash"/>) decoded to their bytes for the <c>bytea</c> columns, sizes of 1 byte or more, and a
/// blockset's list read once into arrays (its cancellation token checked between items).
/// </summary>
internal static class PgInput
{
    /// <summary>How many items are read between two checks of the cancellation token.</summary>
    private const int CancellationStride = 64;

    /// <summary>A block's hash bytes, after checking the hash and the size.</summary>
    /// <exception cref="ArgumentException">The hash or the size is invalid.</exception>
    public static byte[] Block(string hash, long size)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
        return Convert.FromBase64String(hash);
    }

    /// <summary>A block's hash bytes from its binary form (bound as <c>bytea</c> as they are: no base64 on the way), after checking the hash and the size.</summary>
    /// <exception cref="ArgumentException">The hash is empty or the size below 1.</exception>
    public static byte[] Block(in BlockHash hash, long size)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
        return hash.Bytes.ToArray();
    }

    /// <summary>
    /// Many blocks as two arrays (hash bytes, sizes) in order, after <see cref="Require.Blocks"/> (every block
    /// and the results buffer checked before anything is written), with the sum of their sizes: the length of a blockset
    /// made of them.
    /// </summary>
    /// <exception cref="ArgumentException">The buffer is too short, or a block is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="forBlockset"/> and the sizes add up to more than <see cref="long.MaxValue"/> bytes.</exception>
    public static (byte[][] Hashes, long[] Sizes, long Length) Keys(ReadOnlySpan<BinaryBlockKey> blocks, int resultsLength, bool forBlockset)
    {
        Require.Blocks(blocks, resultsLength);
        var hashes = new byte[blocks.Length][];
        var sizes = new long[blocks.Length];
        long length = 0;
        for (var i = 0; i < blocks.Length; i++)
        {
            hashes[i] = blocks[i].Hash.Bytes.ToArray();
            sizes[i] = blocks[i].Size;
            if (forBlockset)
            {
                length = length <= long.MaxValue - sizes[i]
                    ? length + sizes[i]
                    : throw new ArgumentOutOfRangeException(nameof(blocks), sizes[i], $"The blockset's length passes {long.MaxValue:N0} bytes at block {i} ({sizes[i]:N0} bytes); a blockset's Length is the sum of its blocks' sizes and must fit a 64-bit integer. Nothing was written.");
            }
        }

        return (hashes, sizes, length);
    }

    /// <summary>A full hash's bytes, or null.</summary>
    /// <exception cref="ArgumentException">The hash is not valid base64.</exception>
    public static byte[]? FullHash(string? fullHash)
    {
        if (fullHash is null)
        {
            return null;
        }

        BlockHash.Validate(fullHash, nameof(fullHash));
        return Convert.FromBase64String(fullHash);
    }

    /// <summary>A blockset's blocks as two arrays, hash bytes and sizes, in order.</summary>
    /// <exception cref="ArgumentException">The list is null, or a hash or size is invalid.</exception>
    /// <exception cref="OperationCanceledException">Cancelled while reading the list.</exception>
    public static (byte[][] Hashes, long[] Sizes) Keys(IReadOnlyList<BlockKey> blocks, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(blocks);

        var hashes = new byte[blocks.Count][];
        var sizes = new long[blocks.Count];
        for (var i = 0; i < hashes.Length; i++)
        {
            if (i % CancellationStride == 0)
            {
                cancellationToken.ThrowIfCancellationRequested();
            }

            var key = blocks[i];
            if (!BlockHash.IsValid(key.Hash) || key.Size < 1)
            {
                throw Errors.BlocksetBlockInvalid(i, key.Hash, key.Size);
            }

            hashes[i] = Convert.FromBase64String(key.Hash);
            sizes[i] = key.Size;
        }

        cancellationToken.ThrowIfCancellationRequested();
        return (hashes, sizes);
    }

    /// <summary>A blockset's block IDs as an array, in order.</summary>
    /// <exception cref="ArgumentNullException">The list is null.</exception>
    /// <exception cref="OperationCanceledException">Cancelled while reading the list.</exception>
    public static long[] Ids(IReadOnlyList<long> blockIds, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(blockIds);

        var ids = new long[blockIds.Count];
        for (var i = 0; i < ids.Length; i++)
        {
            if (i % CancellationStride == 0)
            {
                cancellationToken.ThrowIfCancellationRequested();
            }

            ids[i] = blockIds[i];
        }

        cancellationToken.ThrowIfCancellationRequested();
        return ids;
    }

    /// <summary>Why a blockset was not written: a block it names is unknown, or lies in a volume being deleted (<paramref name="describe"/> names the block at a position).</summary>
    public static BlockDbException Refused(BlocksetAdded added, Func<int, string> describe) => added switch
    {
        { Missing: { } position } => new BlockNotFoundException($"Block {position} of the blockset ({describe(position)}) is not in the index; nothing of the blockset was written.", position),
        { InDeletedVolume: { } position } => new BlockDbConflictException($"Block {position} of the blockset ({describe(position)}) is in a volume that is being deleted; record the block again in a live volume (MoveBlocksAsync) before a blockset names it. Nothing of the blockset was written."),
        _ => new BlockDbException("The blockset was neither written nor refused for a reason the server gave; nothing of it was written."),
    };
}
