using BlockDb.Opening;

namespace BlockDb.Tests.Providers;

/// <summary>A database written by any provider reads the same through each of the others, and all load one SQLite build.</summary>
public sealed class CrossProviderTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string, string> Pairs()
    {
        var data = new TheoryData<string, string>();
        foreach (var writer in ProviderCatalog.SqliteNames)
        {
            foreach (var reader in ProviderCatalog.SqliteNames)
            {
                data.Add(writer, reader);
            }
        }

        return data;
    }

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_database_written_by_one_provider_reads_the_same_through_another(string writer, string reader)
    {
        var path = _folder.File($"{writer}-{reader}.db");
        var written = new List<(long Id, BlockKey[] Blocks, string FullHash)>();
        var ids = new Dictionary<BlockKey, long>();
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = writer, DataSource = path }))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var file = 0; file < 20; file++)
            {
                var blocks = Enumerable.Range(0, 1 + (file % 7)).Select(i => TestData.Block((file * 3) + i, 1000 + i)).ToArray();
                foreach (var block in blocks)
                {
                    ids[block] = (await session.SelectXorInsertAsync(block)).Id;
                }

                var fullHash = TestData.Hash(10_000 + file);
                written.Add((await session.AddBlocksetAsync(blocks, fullHash), blocks, fullHash));
            }
        }

        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = reader, DataSource = path }))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(new BlockDbCounts(ids.Count, written.Count, written.Sum(w => w.Blocks.Length)), await session.GetCountsAsync());
            foreach (var (key, id) in ids)
            {
                Assert.Equal(id, await session.FindBlockAsync(key));
            }

            foreach (var (id, blocks, fullHash) in written)
            {
                var listed = await session.ListBlocksetBlocksAsync(id);
                Assert.Equal(blocks, listed.Select(b => b.Block));
                Assert.Equal(blocks.Select(b => ids[b]), listed.Select(b => b.BlockId));
                Assert.Equal(new BlocksetInfo(id, blocks.Sum(b => b.Size), fullHash, blocks.Length), await session.GetBlocksetAsync(id));
            }

            // And the reader can keep writing to it.
            Assert.True((await session.SelectXorInsertAsync(TestData.Block(-1, 1))).Created);
        }
    }
}
