namespace BlockDb.Tests.Blocksets;

/// <summary>
/// A blockset deletion racing a backup: the backup finds an unchanged file's blockset (so it will not record the file
/// again), another session deletes that blockset (the highest ID) and adds blocksets for other files. The ID the
/// backup holds must never name another file's blockset afterwards, or the backup would record the file pointing at
/// the wrong content; every call given the stale ID must fail with <see cref="BlocksetNotFoundException"/> instead.
/// Every provider and layout. The SQLite layouts pass by the collected blockset-ID floor (SQLite gives a new row the
/// highest ID + 1, <see href="https://www.sqlite.org/autoinc.html"/>); PostgreSQL's <c>Blockset."ID"</c> is
/// <c>GENERATED ALWAYS AS IDENTITY</c> (src/BlockDb.PostgreSql/Schema/PgSchema.cs), a sequence that never goes back,
/// so it passes without one.
/// </summary>
public sealed class BlocksetIdReuseTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_deleted_blockset_id_is_never_handed_to_another_blockset_so_a_stale_id_names_nothing(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        await using var backup = await db.OpenSessionAsync();
        await using var prune = await db.OpenSessionAsync();
        var first = (await prune.SelectXorInsertAsync(TestData.Block(1, 100))).Id;
        var second = (await prune.SelectXorInsertAsync(TestData.Block(2, 200))).Id;
        var kept = await prune.AddBlocksetAsync([first], TestData.Hash(-1));
        var old = await prune.AddBlocksetAsync([first, first], TestData.Hash(-2));
        await prune.CommitAsync();

        // The backup finds the unchanged file's blockset: it will not record the file again.
        var found = await backup.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(-2)), 200);
        Assert.Equal(old, found);

        // Meanwhile a prune deletes that blockset (the highest ID) and other files' blocksets arrive, by every write call.
        await prune.DeleteBlocksetAsync(old);
        await prune.CommitAsync();
        var results = new SelectXorInsertResult[1];
        var added = new List<long>
        {
            await prune.AddBlocksetAsync([second], TestData.Hash(-3)),
            await prune.AddBlocksetAsync([TestData.Block(2, 200), TestData.Block(1, 100)]),
            await prune.AddBlocksetAsync(new[] { TestData.Block(3, 300) }, results, TestData.Bytes(-4)),
        };
        await prune.CommitAsync();
        Assert.DoesNotContain(old, added);
        Assert.All(added, id => Assert.True(id > old, $"blockset ID {id} handed out at or below the deleted ID {old}"));

        // The stale ID names nothing: every call given it is refused, and the other files' blocksets are untouched.
        await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await backup.GetBlocksetAsync(old));
        await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await backup.ListBlocksetBlocksAsync(old));
        await Assert.ThrowsAsync<BlocksetNotFoundException>(async () => await backup.DeleteBlocksetAsync(old));
        await backup.RollbackAsync();
        Assert.Equal([second], (await backup.ListBlocksetBlocksAsync(added[0])).Select(b => b.BlockId));
        Assert.Equal(1, (await backup.GetBlocksetAsync(kept)).BlockCount);
        Assert.Equal(4, (await backup.GetCountsAsync()).Blocksets);
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_deleted_blockset_high_water_mark_survives_reopening_and_a_bulk_import(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        long block;
        long deleted;
        await using (var db = Open(o => o.Batching.CommitEvery = 1))
        {
            await using var session = await db.OpenSessionAsync();
            block = (await session.SelectXorInsertAsync(TestData.Block(1, 100))).Id;
            await session.AddBlocksetAsync([block]);
            var middle = await session.AddBlocksetAsync([block, block]);
            deleted = await session.AddBlocksetAsync([block, block, block]);

            // The highest first, then the next highest: the mark is only ever raised.
            await session.DeleteBlocksetAsync(deleted);
            await session.DeleteBlocksetAsync(middle);
            await session.CommitAsync();
        }

        // Another process (here: a fresh open) adds a blockset by a bulk import, then by a session.
        await using var reopened = Open(o => o.Batching.CommitEvery = 1);
        var import = await reopened.ImportBlocksetsAsync(Stream(new ImportBlockset([TestData.Block(1, 100)], TestData.Bytes(-5))));
        Assert.Equal(1, import.Created);
        await using var next = await reopened.OpenSessionAsync();
        var imported = await next.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(-5)), 100);
        Assert.True(imported > deleted, $"imported blockset got ID {imported}, at or below the deleted ID {deleted}");
        var added = await next.AddBlocksetAsync([block]);
        Assert.True(added > imported, $"blockset ID {added} handed out at or below {imported}");
        Assert.Equal(3, (await next.GetCountsAsync()).Blocksets);
    }

    private static async IAsyncEnumerable<ImportBlockset> Stream(params ImportBlockset[] blocksets)
    {
        await Task.Yield();
        foreach (var blockset in blocksets)
        {
            yield return blockset;
        }
    }
}
