using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Opening;

/// <summary>
/// The block layouts: recorded in the file and refused when unknown or mismatched, the same answers from each,
/// and the KeyMap layout's correctness across databases (two open instances have two maps, as two processes do),
/// rollbacks and its memory limit. Real files in temp folders.
/// </summary>
public sealed class LayoutTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    private IBlockDatabase Open(string provider, string name, BlockLayout? layout = null, Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = _folder.File(name), Index = { Layout = layout } };
        configure?.Invoke(options);
        return BlockDatabase.Open(options);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Every_layout_gives_the_same_ids_and_hashes_for_the_same_calls(string provider)
    {
        var results = new List<string>();
        foreach (var layout in LayoutCatalog.Created)
        {
            var log = new List<string>();
            await using (var db = Open(provider, $"{layout}.db", layout, o => o.Batching.CommitEvery = 7))
            await using (var session = await db.OpenSessionAsync())
            {
                Assert.Equal(layout, db.Layout);
                var rng = new Random(11);
                for (var file = 0; file < 40; file++)
                {
                    var blocks = new List<BlockKey>();
                    for (var i = 0; i < 1 + rng.Next(6); i++)
                    {
                        var block = TestData.Block(rng.Next(60), 1000 + rng.Next(3));
                        var r = await session.SelectXorInsertAsync(block);
                        log.Add($"{r.Id}/{r.Created}");
                        blocks.Add(block);
                    }

                    var set = await session.AddBlocksetAsync(blocks);
                    log.AddRange((await session.ListBlocksetBlocksAsync(set)).Select(b => $"{b.Index}:{b.BlockId}:{b.Block.Hash}:{b.Block.Size}"));
                }

                log.Add((await session.FindBlockAsync(TestData.Block(999, 1000)))?.ToString() ?? "null");
                log.Add((await session.GetCountsAsync()).ToString());
            }

            results.Add(string.Join('\n', log));
        }

        Assert.All(results, r => Assert.Equal(results[0], r));
        Assert.Contains("True", results[0], StringComparison.Ordinal);
        Assert.Contains("False", results[0], StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_file_keeps_its_layout_and_a_mismatched_request_is_refused_untouched()
    {
        await using (var db = Open("PInvoke", "text.db", BlockLayout.TextHash))
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 10));
        }

        await using (var db = Open("PInvoke", "text.db"))
        {
            Assert.Equal(BlockLayout.TextHash, db.Layout);
        }

        var before = File.ReadAllBytes(_folder.File("text.db"));
        var e = Assert.Throws<BlockDbFormatException>(() => Open("PInvoke", "text.db", BlockLayout.KeyMap));
        Assert.Contains("TextHash", e.Message, StringComparison.Ordinal);
        Assert.Contains("KeyMap", e.Message, StringComparison.Ordinal);
        Assert.Equal(before, File.ReadAllBytes(_folder.File("text.db")));

        await using (var db = Open("MicrosoftData", "new.db"))
        {
            Assert.Equal(IndexOptions.DefaultLayout, db.Layout);
        }
    }

    [Theory]
    [InlineData("Lsm")]
    [InlineData("2")]
    [InlineData("texthash")]
    [InlineData("keymap")]
    public async Task A_version_2_file_with_a_layout_this_build_does_not_know_is_refused_untouched(string stored)
    {
        await using (var db = Open("PInvoke", "v2.db", BlockLayout.KeyMap))
        {
        }

        var path = _folder.File("v2.db");
        using (var raw = ProviderCatalog.SqliteDriver("PInvoke").Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite)))
        using (var update = raw.Prepare(new SqlStatement("SetLayout", """UPDATE "BlockDbSettings" SET "Value" = @Value WHERE "Name" = 'BlockLayout'""", "@Value")))
        {
            update.BindText(1, stored);
            Assert.Equal(1, update.ExecuteNonQuery());
        }

        var before = File.ReadAllBytes(path);
        var e = Assert.Throws<BlockDbFormatException>(() => Open("MicrosoftData", "v2.db"));
        Assert.Contains($"'{stored}'", e.Message, StringComparison.Ordinal);
        Assert.Equal(before, File.ReadAllBytes(path));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task KeyMap_finds_blocks_another_database_committed_and_never_inserts_them_twice(string provider)
    {
        await using var a = Open(provider, "shared.db", BlockLayout.KeyMap);
        await using var b = Open(provider, "shared.db", BlockLayout.KeyMap);
        await using var sa = await a.OpenSessionAsync();
        await using var sb = await b.OpenSessionAsync();

        // b's map is loaded (empty) before a writes anything.
        Assert.Null(await sb.FindBlockAsync(TestData.Block(1, 10)));
        var first = await sa.SelectXorInsertAsync(TestData.Block(1, 10));
        await sa.CommitAsync();

        Assert.Equal(first.Id, await sb.FindBlockAsync(TestData.Block(1, 10)));
        Assert.Equal(new SelectXorInsertResult(first.Id, false), await sb.SelectXorInsertAsync(TestData.Block(1, 10)));

        var second = await sb.SelectXorInsertAsync(TestData.Block(2, 10));
        await sb.CommitAsync();
        Assert.Equal(new SelectXorInsertResult(second.Id, false), await sa.SelectXorInsertAsync(TestData.Block(2, 10)));

        Assert.Equal(2, (await sa.GetCountsAsync()).Blocks);
        Assert.Equal((2, ((ISqliteBlockDatabase)a).KeyMapUsage.Bytes), ((ISqliteBlockDatabase)a).KeyMapUsage);
        Assert.True(((ISqliteBlockDatabase)a).KeyMapUsage.Bytes >= 2 * 8);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task KeyMap_after_a_rollback_finds_the_block_that_reused_the_id(string provider)
    {
        await using var a = Open(provider, "rewind.db", BlockLayout.KeyMap, o => o.Batching.CommitEvery = 0);
        await using var b = Open(provider, "rewind.db", BlockLayout.KeyMap);
        await using var sa = await a.OpenSessionAsync();
        await using var sb = await b.OpenSessionAsync();

        var rolledBack = await sa.SelectXorInsertAsync(TestData.Block(1, 10));
        await sa.RollbackAsync();

        // b takes the same ID for another block; a's map still holds the rolled-back entry.
        var other = await sb.SelectXorInsertAsync(TestData.Block(2, 10));
        await sb.CommitAsync();
        Assert.Equal(rolledBack.Id, other.Id);

        Assert.Equal(other.Id, await sa.FindBlockAsync(TestData.Block(2, 10)));
        Assert.Null(await sa.FindBlockAsync(TestData.Block(1, 10)));
        var again = await sa.SelectXorInsertAsync(TestData.Block(1, 10));
        Assert.True(again.Created);
        Assert.NotEqual(other.Id, again.Id);
        await sa.CommitAsync();
        Assert.Equal(again.Id, await sb.FindBlockAsync(TestData.Block(1, 10)));
    }

    [Fact]
    public async Task KeyMap_memory_limit_refuses_the_write_and_keeps_everything_committed()
    {
        var committed = 0;
        BlockDbConfigurationException? refused = null;
        await using (var db = Open("PInvoke", "limit.db", BlockLayout.KeyMap, o =>
        {
            o.Index.KeyMapMemoryLimitMegabytes = 1;
            o.Batching.CommitEvery = 1000;
        }))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = 0; i < 200_000 && refused is null; i++)
            {
                try
                {
                    await session.SelectXorInsertAsync(TestData.Block(i, 10));
                    committed++;
                }
                catch (BlockDbConfigurationException e)
                {
                    refused = e;
                }
            }

            Assert.NotNull(refused);
            Assert.Equal("BlockDb:Index:KeyMapMemoryLimitMegabytes", refused.Setting);
            Assert.Contains("MB per million blocks", refused.Message, StringComparison.Ordinal);
            Assert.InRange(((ISqliteBlockDatabase)db).KeyMapUsage.Bytes, 1, 1 << 20);
            Assert.InRange(committed, 50_000, 131_072);
        }

        // The session committed its open batch on dispose: every acknowledged block is there. Reopened under the same
        // limit, the map loads (one table, sized once) and takes new blocks only while old and new tables fit the limit.
        var more = 0;
        await using (var db = Open("PInvoke", "limit.db", configure: o => o.Index.KeyMapMemoryLimitMegabytes = 1))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(committed, (await session.GetCountsAsync()).Blocks);
            Assert.Equal(1, await session.FindBlockAsync(TestData.Block(0, 10)));
            var refusedAgain = false;
            for (var i = committed; i < 300_000 && !refusedAgain; i++)
            {
                try
                {
                    await session.SelectXorInsertAsync(TestData.Block(i, 10));
                    more++;
                }
                catch (BlockDbConfigurationException)
                {
                    refusedAgain = true;
                }

                Assert.InRange(((ISqliteBlockDatabase)db).KeyMapUsage.Bytes, 1, 1 << 20);
            }

            Assert.True(refusedAgain);
            Assert.Equal(committed + more, (await session.GetCountsAsync()).Blocks);
        }

        committed += more;
        await using (var db = Open("PInvoke", "limit.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(1, await session.FindBlockAsync(TestData.Block(0, 10)));
            Assert.Equal(committed, await session.FindBlockAsync(TestData.Block(committed - 1, 10)));
            Assert.Equal(committed, ((ISqliteBlockDatabase)db).KeyMapUsage.Blocks);
        }
    }
}
