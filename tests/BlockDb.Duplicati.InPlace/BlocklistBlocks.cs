using System.Security.Cryptography;

namespace BlockDb.Duplicati.InPlace;

/// <summary>A file's blocklist blocks as Duplicati's splitter cuts and hashes them (SHA-256 block hashes), for callers that record a file block by block.</summary>
public static class BlocklistBlocks
{
    /// <summary>The blocklist blocks of a file of <paramref name="blocks"/>, in order: none for 0 or 1 block (<see cref="DuplicatiBlocklists"/>).</summary>
    /// <param name="blocks">The file's blocks in order (SHA-256 hashes).</param>
    /// <param name="blocksize">The file's <c>blocksize</c> in bytes.</param>
    /// <returns>Each blocklist block's key: the SHA-256 of its bytes, and its size.</returns>
    public static List<BlockKey> Of(IReadOnlyList<BlockKey> blocks, int blocksize)
    {
        ArgumentNullException.ThrowIfNull(blocks);
        var lists = new List<BlockKey>();
        var buffer = new byte[blocksize];
        var keys = blocks.ToArray();
        for (var k = 0L; k < DuplicatiBlocklists.Count(keys.Length, blocksize, SHA256.HashSizeInBytes); k++)
        {
            var size = DuplicatiBlocklists.Write(keys, k, blocksize, SHA256.HashSizeInBytes, buffer);
            lists.Add(new BlockKey(new BlockHash(SHA256.HashData(buffer.AsSpan(0, size))), size));
        }

        return lists;
    }
}
