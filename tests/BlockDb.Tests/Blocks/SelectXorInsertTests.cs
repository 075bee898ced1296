namespace BlockDb.Tests.Blocks;

/// <summary>
/// Finding and inserting blocks, for every provider and layout, PostgreSQL included: insert then find, an existing
/// block refused with the engine's constraint code, select-xor-insert giving one ID per block across sessions and
/// reopening under every strategy its layout runs (and a strategy it cannot run refused at build), a known block
/// written without a write, and hashes checked before anything is written.
/// </summary>
public sealed class SelectXorInsertTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Insert_then_find_returns_the_same_id_and_find_of_a_missing_block_returns_null(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var a = (await session.SelectXorInsertAsync(TestData.Block(1, 100))).Id;
        var b = (await session.SelectXorInsertAsync(TestData.Block(2, 100))).Id;
        Assert.NotEqual(a, b);
        Assert.Equal(a, await session.FindBlockAsync(TestData.Block(1, 100)));
        Assert.Equal(b, await session.FindBlockAsync(TestData.Block(2, 100)));
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 101)));
        Assert.Null(await session.FindBlockAsync(TestData.Block(3, 100)));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Select_xor_insert_of_a_block_in_the_batch_finds_it_and_writes_nothing(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        var first = await session.SelectXorInsertAsync(TestData.Block(1, 100));
        await session.SelectXorInsertAsync(TestData.Block(2, 100));
        Assert.Equal(new SelectXorInsertResult(first.Id, false), await session.SelectXorInsertAsync(TestData.Block(1, 100)));
        Assert.Equal(2, session.PendingWrites);
        await session.CommitAsync();
        await using var other = await db.OpenSessionAsync();
        Assert.Equal(2, (await other.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrixWithStrategies), MemberType = typeof(ConformanceTestBase))]
    public async Task Select_xor_insert_gives_one_id_per_block_across_sessions_and_reopening(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        Use(provider, layout);
        long id;
        await using (var db = Open(o => o.SelectXorInsert = strategy))
        {
            await using (var session = await db.OpenSessionAsync())
            {
                var first = await session.SelectXorInsertAsync(TestData.Block(7, 4096));
                var again = await session.SelectXorInsertAsync(TestData.Block(7, 4096));
                var otherSize = await session.SelectXorInsertAsync(TestData.Block(7, 4097));
                Assert.True(first.Created);
                Assert.False(again.Created);
                Assert.Equal(first.Id, again.Id);
                Assert.True(otherSize.Created);
                Assert.NotEqual(first.Id, otherSize.Id);
                id = first.Id;
            }

            await using var second = await db.OpenSessionAsync();
            Assert.Equal(new SelectXorInsertResult(id, false), await second.SelectXorInsertAsync(TestData.Block(7, 4096)));
        }

        await using (var reopened = Open(o => o.SelectXorInsert = strategy))
        await using (var session = await reopened.OpenSessionAsync())
        {
            Assert.Equal(new SelectXorInsertResult(id, false), await session.SelectXorInsertAsync(TestData.Block(7, 4096)));
            Assert.Equal(2, (await session.GetCountsAsync()).Blocks);
        }
    }

    [Theory]
    [MemberData(nameof(MatrixWithRefusedStrategies), MemberType = typeof(ConformanceTestBase))]
    public async Task A_strategy_the_layout_cannot_run_is_refused_when_the_database_is_built_not_ignored(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        Use(provider, layout);

        // Configured with the layout: refused before any file exists.
        var e = Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.SelectXorInsert = strategy));
        Assert.Equal("BlockDb:SelectXorInsert", e.Setting);
        Assert.Contains(strategy.ToString(), e.Message, StringComparison.Ordinal);
        Assert.False(File.Exists(DbPath));

        // The layout read from an existing file: refused at open, before a session, and the file is left as it was.
        await using (var db = Open())
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 10));
        }

        var before = await File.ReadAllBytesAsync(DbPath);
        var fromFile = Assert.Throws<BlockDbConfigurationException>(() => BlockDatabase.Open(new BlockDbOptions { Provider = Provider, DataSource = DbPath, SelectXorInsert = strategy }));
        Assert.Equal("BlockDb:SelectXorInsert", fromFile.Setting);
        Assert.Equal(before, await File.ReadAllBytesAsync(DbPath));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrixWithStrategies), MemberType = typeof(ConformanceTestBase))]
    public async Task Select_xor_insert_of_a_known_block_counts_no_write_and_holds_no_transaction(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        Use(provider, layout);
        await using var db = Open(o => { o.SelectXorInsert = strategy; o.Batching.CommitEvery = 1; });
        await using var writer = await db.OpenSessionAsync();
        await writer.SelectXorInsertAsync(TestData.Block(1, 10));
        Assert.Equal(0, writer.PendingWrites);
        Assert.False((await writer.SelectXorInsertAsync(TestData.Block(1, 10))).Created);
        Assert.Equal(0, writer.PendingWrites);

        // A second writer can take the write lock at once: the first holds no transaction.
        await using var other = await db.OpenSessionAsync();
        Assert.True((await other.SelectXorInsertAsync(TestData.Block(2, 10))).Created);
    }

    [Theory]
    [MemberData(nameof(MatrixWithBadHashes), MemberType = typeof(ConformanceTestBase))]
    public async Task Bad_hashes_are_refused_before_anything_is_written(string provider, BlockLayout layout, string hash, Type expected)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        var e = await Assert.ThrowsAnyAsync<ArgumentException>(async () => await session.SelectXorInsertAsync(BlockKey.Parse(hash, 10)));
        Assert.IsType(expected, e);
        Assert.Contains("base64", e.Message, StringComparison.Ordinal);
        Assert.False(BlockKey.TryParse(hash, 10, out var none));
        Assert.Equal(default, none);
        Assert.Equal(0, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Null_hashes_and_sizes_below_one_byte_are_refused(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        await Assert.ThrowsAsync<ArgumentNullException>(async () => await session.SelectXorInsertAsync(BlockKey.Parse(null!, 10)));
        var negative = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.SelectXorInsertAsync(TestData.Block(1, -5)));
        Assert.Contains("1 or more", negative.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await session.SelectXorInsertAsync(TestData.Block(1, 0)));
        Assert.Equal(0, (await session.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Hashes_of_other_lengths_and_padding_are_accepted(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        Assert.True((await session.SelectXorInsertAsync(BlockKey.Parse("AAAA", 1))).Created);
        Assert.True((await session.SelectXorInsertAsync(BlockKey.Parse("AA==", 1))).Created);
        Assert.True((await session.SelectXorInsertAsync(BlockKey.Parse(Convert.ToBase64String(new byte[64]), 1))).Created);
    }
}
