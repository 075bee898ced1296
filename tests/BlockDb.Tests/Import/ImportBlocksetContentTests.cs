namespace BlockDb.Tests.Import;

/// <summary>
/// What <see cref="IBlockDatabase.ImportBlocksetsAsync"/> writes, on every SQLite provider and layout: each blockset
/// lists back its blocks in file order with its length from their sizes, for files of one block, of a few, and of more
/// than a verification read's 16 places with blocks repeated in them (KeyMap finds a file's map hits together).
/// </summary>
public sealed class ImportBlocksetContentTests : ConformanceTestBase
{
    private static async IAsyncEnumerable<T> Stream<T>(IEnumerable<T> items)
    {
        foreach (var item in items)
        {
            await Task.Yield();
            yield return item;
        }
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Imported_blocksets_list_their_blocks_in_order_with_repeats_and_their_length(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await db.ImportBlocksAsync(Stream(Enumerable.Range(0, 40).Select(i => ImportTests.Block(i))));
        int[][] files = [[5], [7, 3], [1, 2, 1, 2], [.. Enumerable.Range(0, 37).Select(i => (i * 7) % 13)], [.. Enumerable.Range(0, 40).Reverse()]];
        var result = await db.ImportBlocksetsAsync(Stream(files.Select((f, n) => new ImportBlockset([.. f.Select(i => ImportTests.Block(i).Block)], TestData.Bytes(100 + n)))));
        Assert.Equal(files.Length, result.Created);

        await using var reader = await db.OpenSessionAsync();
        for (var n = 0; n < files.Length; n++)
        {
            var length = files[n].Sum(i => ImportTests.Block(i).Block.Size);
            var id = await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(100 + n)), length);
            Assert.NotNull(id);
            Assert.Equal(length, (await reader.GetBlocksetAsync(id.Value)).Length);
            Assert.Equal(files[n].Select(i => ImportTests.Block(i).Block.Hash.ToString()), (await reader.ListBlocksetBlocksAsync(id.Value)).Select(b => b.Block.Hash.ToString()));
        }

        Assert.True((await db.CheckAsync()).IsClean);
    }
}
