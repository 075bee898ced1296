namespace BlockDb;

/// <summary>
/// Duplicati's blocklists: a file of more than one block also stores its block hashes (binary, in block order)
/// concatenated and cut into blocklist blocks of <c>blocksize / hashsize</c> hashes each; each blocklist block is itself a
/// <c>Block</c> (hash = the <c>blockhash</c> algorithm over its bytes, size = its byte count) named, in order, by a
/// <c>BlocklistHash</c> row. A file of 0 or 1 block has none. The format is Duplicati's block splitter
/// (<see href="https://github.com/duplicati/duplicati/blob/master/Duplicati/Library/Main/Operation/Backup/StreamBlockSplitter.cs"/>,
/// lines 80-163 at 66cfb242), which its repair and recreate rebuild the same way.
/// A backup engine that writes a Duplicati database stores each blocklist's bytes as a block before the file's blockset.
/// </summary>
public static class DuplicatiBlocklists
{
    /// <summary>How many blocklists a file of <paramref name="blocks"/> blocks has: 0 for 0 or 1 block, else ⌈blocks / (blocksize / hashSize)⌉.</summary>
    /// <param name="blocks">The file's block count.</param>
    /// <param name="blocksize">The database's block size in bytes (Configuration's <c>blocksize</c>).</param>
    /// <param name="hashSize">The block hash size in bytes (32 for SHA-256).</param>
    /// <returns>The number of blocklists (and so of the file's <c>BlocklistHash</c> rows).</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="blocks"/> is negative, <paramref name="hashSize"/> below 1, or <paramref name="blocksize"/> smaller than <paramref name="hashSize"/>.</exception>
    public static long Count(long blocks, int blocksize, int hashSize)
    {
        var perList = HashesPerBlocklist(blocksize, hashSize);
        ArgumentOutOfRangeException.ThrowIfNegative(blocks);
        return blocks <= 1 ? 0 : ((blocks - 1) / perList) + 1;
    }

    /// <summary>
    /// Writes the bytes of blocklist <paramref name="index"/> of a file whose blocks are <paramref name="blocks"/>: the
    /// binary hashes of blocks [index · H, min(n, (index + 1) · H)), H = blocksize / hashSize. Hash those bytes with the
    /// database's <c>blockhash</c> algorithm to get the blocklist's block hash; the byte count is its block size.
    /// </summary>
    /// <param name="blocks">All of the file's blocks, in order (each hash <paramref name="hashSize"/> bytes).</param>
    /// <param name="index">The blocklist, from 0 to <see cref="Count"/> − 1.</param>
    /// <param name="blocksize">The database's block size in bytes.</param>
    /// <param name="hashSize">The block hash size in bytes.</param>
    /// <param name="destination">Where the bytes go: at least min(H, n − index · H) · <paramref name="hashSize"/> bytes.</param>
    /// <returns>The number of bytes written (the blocklist block's size).</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not a blocklist of <paramref name="blocks"/>, or the sizes are out of range as for <see cref="Count"/>.</exception>
    /// <exception cref="ArgumentException">A hash is not <paramref name="hashSize"/> bytes, or <paramref name="destination"/> is too small.</exception>
    public static int Write(ReadOnlySpan<BlockKey> blocks, long index, int blocksize, int hashSize, Span<byte> destination)
    {
        var (first, length) = Blocklist(blocks.Length, index, blocksize, hashSize);
        var slice = blocks.Slice(first, length);
        RequireRoom(slice.Length, hashSize, destination);
        for (var i = 0; i < slice.Length; i++)
        {
            var hash = slice[i].Hash;
            if (hash.Length != hashSize)
            {
                throw new ArgumentException($"Block {first + i}'s hash is {hash.Length} bytes, not {hashSize} (the file's block hash size).", nameof(blocks));
            }

            hash.Bytes.CopyTo(destination[(i * hashSize)..]);
        }

        return slice.Length * hashSize;
    }

    /// <summary>As <see cref="Write"/>, for the Duplicati rules' blocks, whose hashes are the stored base64 text.</summary>
    internal static int WriteText(ReadOnlySpan<TextBlockKey> blocks, long index, int blocksize, int hashSize, Span<byte> destination)
    {
        var (first, length) = Blocklist(blocks.Length, index, blocksize, hashSize);
        return WriteHashes(blocks.Slice(first, length), first, hashSize, destination);
    }

    /// <summary>The first block and the block count of blocklist <paramref name="index"/> of a file of <paramref name="blocks"/> blocks.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not a blocklist of the file.</exception>
    private static (int First, int Length) Blocklist(int blocks, long index, int blocksize, int hashSize)
    {
        var count = Count(blocks, blocksize, hashSize);
        if (index < 0 || index >= count)
        {
            throw new ArgumentOutOfRangeException(nameof(index), index, $"A file of {blocks} block(s) has {count} blocklist(s) at this block and hash size.");
        }

        var perList = HashesPerBlocklist(blocksize, hashSize);
        var first = (int)(index * perList);
        return (first, Math.Min(blocks, first + perList) - first);
    }

    /// <summary>
    /// Writes the binary hashes of <paramref name="slice"/> (one blocklist's blocks, the first being block
    /// <paramref name="first"/> of its file, for messages) one after another into <paramref name="destination"/>.
    /// </summary>
    /// <returns>The bytes written.</returns>
    /// <exception cref="ArgumentException">A hash is not base64 of <paramref name="hashSize"/> bytes, or <paramref name="destination"/> is too small.</exception>
    internal static int WriteHashes(ReadOnlySpan<TextBlockKey> slice, long first, int hashSize, Span<byte> destination)
    {
        RequireRoom(slice.Length, hashSize, destination);
        for (var i = 0; i < slice.Length; i++)
        {
            var hash = slice[i].Hash;
            if (BlockHash.TryDecode(hash, destination.Slice(i * hashSize, hashSize)) != hashSize)
            {
                throw new ArgumentException($"Block {first + i}'s hash {Quoted.Value(hash)} is not canonical padded base64 of {hashSize} bytes.", "blocks");
            }
        }

        return slice.Length * hashSize;
    }

    private static void RequireRoom(int hashes, int hashSize, Span<byte> destination)
    {
        if (destination.Length < hashes * hashSize)
        {
            throw new ArgumentException($"A blocklist of {hashes} hashes takes {hashes * hashSize} bytes; the destination holds {destination.Length}.", nameof(destination));
        }
    }

    private static int HashesPerBlocklist(int blocksize, int hashSize)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(hashSize, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(blocksize, hashSize);
        return blocksize / hashSize;
    }
}
