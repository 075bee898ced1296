namespace BlockDb.Tests.Support;

/// <summary>
/// The tests' short form of the one <see cref="IBlockReader.ListBlocksetBlocksAsync"/>: a whole blockset as a list,
/// read page by page through the public buffer call (as a caller reads a blockset of any length). The call made is the
/// public one; <c>ListingIntoBufferTests</c> proves the paging itself.
/// </summary>
internal static class BlocksetListing
{
    private const int Page = 64;

    /// <summary>Every block of the blockset, in <c>Index</c> order.</summary>
    public static async ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(this IBlockReader reader, long blocksetId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(reader);
        var blocks = new List<BlocksetBlock>();
        var page = new BlocksetBlock[Page];
        while (true)
        {
            var count = await reader.ListBlocksetBlocksAsync(blocksetId, blocks.Count == 0 ? 0 : blocks[^1].Index + 1, page, cancellationToken);
            blocks.AddRange(page.AsSpan(0, count));
            if (count < page.Length)
            {
                return blocks;
            }
        }
    }
}
