using BlockDb.Opening;
using BlockDb.PInvoke;

namespace BlockDb.Tests.Providers;

/// <summary>
/// The native core runs three hot calls fused (a bulk import's block insert, the key map's verification read, a
/// listing's row: ARCHITECTURE, "The SQLite providers"); a driver whose statements do not fuse them is called bind by
/// bind and column by column. Both paths give the same answers: the same work on two files, one through the native
/// core, one through a driver that wraps its statements (<see cref="StatementCountingDriver"/>, which fuses nothing).
/// </summary>
public sealed class FusedCallTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData(BlockLayout.KeyMap)]
    [InlineData(BlockLayout.BlobHash)]
    [InlineData(BlockLayout.TextHash)]
    public async Task Fused_and_unfused_statements_give_the_same_answers(BlockLayout layout)
    {
        var fused = await RunAsync(layout, wrap: false);
        var unfused = await RunAsync(layout, wrap: true);
        Assert.Equal(fused, unfused);
        Assert.Contains("find 3 = 4", fused, StringComparison.Ordinal); // the fourth imported block is found at its ID
    }

    /// <summary>Imports blocks, finds hits and misses, select-xor-inserts, adds a file and lists it in pages; the answers as text.</summary>
    private async Task<string> RunAsync(BlockLayout layout, bool wrap)
    {
        var builder = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _folder.File($"{layout}-{wrap}.db"), Index = { Layout = layout } });
        if (wrap)
        {
            builder.UseSqliteDriver(new StatementCountingDriver(PInvokeDriver.Instance));
        }

        await using var db = builder.Build();
        var answers = new List<string>();
        var imported = await db.ImportBlocksAsync(Blocks(Enumerable.Range(0, 50)));
        answers.Add($"imported {imported.Created}");
        await using var session = await db.OpenSessionAsync();
        foreach (var i in new[] { 0, 2, 49, 50, 1000 })
        {
            answers.Add($"find {i} = {await session.FindBlockAsync(TestData.Block(i, 10 + i))}");
        }

        answers.Add($"find 3 = {await session.FindBlockAsync(TestData.Block(3, 13))}");
        answers.Add($"find 3 at another size = {await session.FindBlockAsync(TestData.Block(3, 14))}");
        answers.Add($"sxi 4 = {await session.SelectXorInsertAsync(TestData.Block(4, 14))}");
        answers.Add($"sxi 60 = {await session.SelectXorInsertAsync(TestData.Block(60, 70))}");
        var file = Enumerable.Range(0, 40).Select(i => TestData.Block(i % 25 * 3, 10 + i % 25 * 3)).ToArray();
        var results = new SelectXorInsertResult[file.Length];
        var blockset = await session.AddBlocksetAsync(file, results);
        await session.CommitAsync();
        answers.Add($"file {blockset}: {string.Join(' ', results)}");

        var page = new BlocksetBlock[16];
        for (var from = 0; ;)
        {
            var count = await session.ListBlocksetBlocksAsync(blockset, from, page);
            answers.AddRange(page[..count].Select(b => $"{b.Index} {b.BlockId} {b.Block.Hash} {b.Block.Size}"));
            if (count < page.Length)
            {
                break;
            }

            from = page[count - 1].Index + 1;
        }

        return string.Join('\n', answers);
    }

    private static async IAsyncEnumerable<ImportBlock> Blocks(IEnumerable<int> seeds)
    {
        foreach (var i in seeds)
        {
            yield return new ImportBlock(TestData.Block(i, 10 + i));
        }

        await Task.CompletedTask;
    }
}
