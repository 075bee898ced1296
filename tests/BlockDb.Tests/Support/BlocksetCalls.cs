namespace BlockDb.Tests.Support;

/// <summary>
/// The tests' short forms of the one <see cref="IBlockWriter.AddBlocksetAsync"/>: by keys with a full hash as base64
/// text (the results buffer made here), and by the IDs a test inserted, whose keys are read back first (the by-ID call
/// is gone from the API; a test that names blocks by ID names the keys it inserted). Neither hides a behaviour of the
/// product: the call made is the public one, and a test about the results reads them from the public call itself.
/// </summary>
internal static class BlocksetCalls
{
    /// <summary>The blockset of <paramref name="blocks"/> (each select-xor-inserted by the call), with <paramref name="fullHash"/> parsed from base64.</summary>
    public static ValueTask<long> AddBlocksetAsync(this IBlockWriter writer, IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blocks);
        var keys = blocks as BlockKey[] ?? [.. blocks];
        return writer is IBlockReader reader
            ? AddWithVolumeAsync(reader, writer, keys, fullHash, cancellationToken)
            : writer.AddBlocksetAsync(keys, new SelectXorInsertResult[keys.Length], fullHash is null ? default : BlockHash.Parse(fullHash), null, cancellationToken);
    }

    // The volume the test's blocks are already in, for a layout that wants one for every block a call could create
    // (Duplicati's): the blocks were inserted before, so the call finds them all and creates none.
    private static async ValueTask<long> AddWithVolumeAsync(IBlockReader reader, IBlockWriter writer, BlockKey[] keys, string? fullHash, CancellationToken cancellationToken)
    {
        long? volume = null;
        foreach (var key in keys)
        {
            if (!key.Equals(default(BlockKey)) && key.Size > 0 && await reader.FindBlockAsync(key, cancellationToken) is { } id)
            {
                volume = (await reader.GetBlockAsync(id, cancellationToken)).VolumeId;
                break;
            }
        }

        return await writer.AddBlocksetAsync(keys, new SelectXorInsertResult[keys.Length], fullHash is null ? default : BlockHash.Parse(fullHash), volume, cancellationToken);
    }

    /// <summary>The blockset of the blocks with these IDs, named by their keys read back (<see cref="IBlockReader.GetBlockAsync"/>).</summary>
    public static async ValueTask<long> AddBlocksetAsync<TSession>(this TSession session, IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default)
        where TSession : IBlockReader, IBlockWriter
    {
        ArgumentNullException.ThrowIfNull(blockIds);
        var keys = new BlockKey[blockIds.Count];
        for (var i = 0; i < keys.Length; i++)
        {
            var block = await session.GetBlockAsync(blockIds[i], cancellationToken);
            keys[i] = block.Block;
        }

        return await AddWithVolumeAsync(session, session, keys, fullHash, cancellationToken);
    }
}
