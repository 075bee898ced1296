using BlockDb.Drivers;
using BlockDb.Opening;
using BlockDb.PInvoke;

namespace BlockDb.Tests.Blocksets;

/// <summary>
/// What <see cref="IBlockWriter.AddBlocksetAsync"/> runs per block, counted by statement (not by a clock) on every
/// layout BlockDb creates and every select-xor-insert strategy it runs: every block is looked up before the first write,
/// whatever the strategy, so a blockset of stored blocks reads each block's row once (its ID with its volume's state, or
/// KeyMap's verification with its VolumeID, 16 rows to a statement) and inserts nothing, and a blockset of new blocks
/// costs each block one lookup (none on KeyMap, whose map answers a miss) and one insert: no more than
/// <see cref="SelectXorInsertStrategy.SelectThenInsert"/>'s own select-xor-insert. The entries come from what this
/// call's lookups and inserts gave, never from a second lookup per block. (Duplicati's layout: <c>DuplicatiInPlaceStatementTests</c>.)
/// </summary>
public sealed class BlocksetStatementCountTests : IDisposable
{
    private const int Count = 40;

    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    /// <summary>Every created layout × every strategy it runs.</summary>
    public static IEnumerable<object[]> LayoutsWithStrategies() =>
        from layout in LayoutCatalog.Created
        from strategy in LayoutCatalog.Of(layout).Strategies
        select new object[] { layout, strategy };

    [Theory]
    [MemberData(nameof(LayoutsWithStrategies))]
    public async Task A_blockset_of_stored_blocks_reads_each_block_once_and_inserts_none(BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        var driver = new StatementCountingDriver(PInvokeDriver.Instance);
        await using var db = Open(driver, layout, strategy);
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("v1");
        var keys = Enumerable.Range(0, Count).Select(i => TestData.Block(i, 4096)).ToArray();
        await session.SelectXorInsertManyAsync(keys, new SelectXorInsertResult[Count], volume);
        await session.CommitAsync();

        driver.On = true;
        var results = new SelectXorInsertResult[Count];
        await session.AddBlocksetAsync(keys, results, default, volume);
        driver.On = false;

        Assert.DoesNotContain(results, r => r.Created);
        // KeyMap verifies its map hits 16 to a statement (16 + 16 + 8 rows); the indexed layouts look each block up.
        Assert.Equal(layout == BlockLayout.KeyMap ? (Count + 15) / 16 : Count, driver.Executions.Count(IsBlockRead));
        Assert.Equal(0, driver.Statements.Count(IsBlockInsert));
    }

    [Theory]
    [MemberData(nameof(LayoutsWithStrategies))]
    public async Task A_blockset_of_new_blocks_costs_each_block_no_more_than_its_select_xor_insert(BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        var driver = new StatementCountingDriver(PInvokeDriver.Instance);
        await using var db = Open(driver, layout, strategy);
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("v1");

        // The same strategy's single calls on other new blocks, in a write transaction (as the blockset's blocks run).
        await session.SelectXorInsertAsync(TestData.Block(1_000, 4096), volume);
        driver.On = true;
        for (var i = 0; i < Count; i++)
        {
            await session.SelectXorInsertAsync(TestData.Block(2_000 + i, 4096), volume);
        }

        driver.On = false;
        var single = BlockStatements(driver);
        driver.Statements.Clear();

        driver.On = true;
        var results = new SelectXorInsertResult[Count];
        await session.AddBlocksetAsync(Enumerable.Range(0, Count).Select(i => TestData.Block(i, 4096)).ToArray(), results, default, volume);
        driver.On = false;

        Assert.All(results, r => Assert.True(r.Created));
        Assert.Equal(Count, driver.Statements.Count(IsBlockInsert));
        Assert.Equal(layout == BlockLayout.KeyMap ? Count : 2 * Count, BlockStatements(driver));
        if (strategy == SelectXorInsertStrategy.SelectThenInsert)
        {
            Assert.InRange(BlockStatements(driver), Count, single);
        }
    }

    /// <summary>The statements recorded that read or write a <c>Block</c> row.</summary>
    private static int BlockStatements(StatementCountingDriver driver) => driver.Statements.Count(s => IsBlockRead(s) || IsBlockInsert(s));

    /// <summary>A read of a block row by its key or ID (not the highest-ID reads of the ID floor, once per transaction).</summary>
    private static bool IsBlockRead(SqlStatement s) => s.Text.Contains("FROM \"Block\"", StringComparison.Ordinal) && !s.Text.Contains("MAX(", StringComparison.Ordinal);

    private static bool IsBlockInsert(SqlStatement s) => s.Text.Contains("INTO \"Block\"", StringComparison.Ordinal);

    private IBlockDatabase Open(StatementCountingDriver driver, BlockLayout layout, SelectXorInsertStrategy strategy) =>
        new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _folder.File("index.db"), Index = { Layout = layout }, SelectXorInsert = strategy })
            .UseSqliteDriver(driver)
            .Build();
}
