using BlockDb.Opening;
using BlockDb.Tests.Conformance;

namespace BlockDb.Tests.Blocksets;

/// <summary>
/// Listing a blockset into the caller's buffer with binary hashes (restore's join without a string per block), for
/// every provider and layout, PostgreSQL included, on a session and on the shared session: page by page it gives
/// each entry's index, block ID and key in order, refuses bad input with typed errors, and on PInvoke allocates nothing
/// per block.
/// </summary>
public sealed class ListingIntoBufferTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Listing_page_by_page_gives_each_entrys_index_block_id_and_key_in_order(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var ids = new List<long>();
        var seeds = new[] { 1, 2, 3, 1, 4, 5, 2 };
        foreach (var seed in seeds)
        {
            ids.Add((await session.SelectXorInsertAsync(TestData.Block(seed, 100 + seed))).Id);
        }

        var blocksetId = await session.AddBlocksetAsync(ids);
        await session.CommitAsync();
        var expected = seeds.Select((seed, i) => new BlocksetBlock(i, ids[i], TestData.Block(seed, 100 + seed)));

        var pages = new List<BlocksetBlock>();
        var buffer = new BlocksetBlock[3];
        var counts = new List<int>();
        for (var from = 0; ; from = pages[^1].Index + 1)
        {
            var count = await session.ListBlocksetBlocksAsync(blocksetId, from, buffer);
            counts.Add(count);
            pages.AddRange(buffer.Take(count));
            if (count < buffer.Length)
            {
                break;
            }
        }

        Assert.Equal([3, 3, 1], counts);
        Assert.Equal(expected, pages);
        Assert.Equal(0, await session.ListBlocksetBlocksAsync(blocksetId, 7, buffer)); // past the end: none, no error

        await using var shared = db.OpenSharedSession();
        var whole = new BlocksetBlock[10];
        Assert.Equal(7, await shared.ListBlocksetBlocksAsync(blocksetId, 0, whole));
        Assert.Equal(pages, whole.Take(7));
        Assert.Equal(2, await shared.ListBlocksetBlocksAsync(blocksetId, 5, whole));
        Assert.Equal(pages.Skip(5), whole.Take(2));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task An_unknown_blockset_a_negative_index_or_an_empty_buffer_is_refused(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var empty = await session.AddBlocksetAsync(Array.Empty<long>());
        await session.CommitAsync();
        var buffer = new BlocksetBlock[4];

        Assert.Equal(0, await session.ListBlocksetBlocksAsync(empty, 0, buffer)); // an empty file's blockset
        await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await session.ListBlocksetBlocksAsync(empty + 1000, 0, buffer));
        var negative = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.ListBlocksetBlocksAsync(empty, -1, buffer));
        Assert.Equal("fromIndex", negative.ParamName);
        var none = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.ListBlocksetBlocksAsync(empty, 0, Memory<BlocksetBlock>.Empty));
        Assert.Equal("into", none.ParamName);

        await using var shared = db.OpenSharedSession();
        await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await shared.ListBlocksetBlocksAsync(empty + 1000, 0, buffer));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await shared.ListBlocksetBlocksAsync(empty, 0, Memory<BlocksetBlock>.Empty));
    }

    [Theory]
    [InlineData(BlockLayout.KeyMap)]
    [InlineData(BlockLayout.BlobHash)]
    public async Task Listing_into_a_buffer_on_PInvoke_allocates_nothing_per_block(BlockLayout layout)
    {
        Use(ProviderCatalog.PInvoke, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var blocks = Enumerable.Range(0, 1000).Select(i => TestData.Block(i, 100)).ToArray();
        var results = new SelectXorInsertResult[blocks.Length];
        var large = await session.AddBlocksetAsync(blocks, results);
        var small = await session.AddBlocksetAsync(blocks.AsMemory(0, 1), results.AsMemory(0, 1));
        await session.CommitAsync();
        var buffer = new BlocksetBlock[blocks.Length];

        // The least of several tries: a call that meets the read batch's idle timer at the gate completes asynchronously
        // and allocates its state machine once, whatever it lists.
        long Allocated(long blocksetId)
        {
            var least = long.MaxValue;
            for (var attempt = 0; attempt < 5; attempt++)
            {
                var before = GC.GetAllocatedBytesForCurrentThread();
                var listed = session.ListBlocksetBlocksAsync(blocksetId, 0, buffer);
                var count = listed.IsCompletedSuccessfully ? listed.Result : listed.AsTask().GetAwaiter().GetResult();
                least = Math.Min(least, GC.GetAllocatedBytesForCurrentThread() - before);
                Assert.Equal(blocksetId == large ? blocks.Length : 1, count);
            }

            return least;
        }

        Allocated(large); // compiles the path
        Allocated(small);
        var one = Allocated(small);
        var thousand = Allocated(large);
        Assert.Equal(blocks[999], buffer[999].Block);
        Assert.True(thousand <= one, $"Listing 1,000 blocks allocated {thousand} B, listing one {one} B: something is allocated per block.");
    }
}
