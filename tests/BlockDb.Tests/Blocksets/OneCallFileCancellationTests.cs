using BlockDb.Drivers;
using BlockDb.Opening;
using BlockDb.PInvoke;

namespace BlockDb.Tests.Blocksets;

/// <summary>
/// <see cref="IBlockWriter.AddBlocksetAsync"/>'s token, fired from inside the call at a chosen statement (a driver hook,
/// not a timer): while the blocks are looked up it stops the call with nothing of it written and the batch's earlier
/// writes kept; once the writes began the call completes, whole. Every layout BlockDb creates, on a real file.
/// </summary>
public sealed class OneCallFileCancellationTests : IDisposable
{
    private const int Stored = 200; // 400 blocks: the token is checked every 256 (Require.CancellationCheckInterval)

    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static IEnumerable<object[]> Layouts() => LayoutCatalog.Created.Select(layout => new object[] { layout });

    [Theory]
    [MemberData(nameof(Layouts))]
    public async Task A_token_fired_while_the_blocks_are_looked_up_stops_the_file_with_nothing_of_it_written(BlockLayout layout)
    {
        var (driver, db) = Open(layout);
        await using var _ = db;
        await using var session = await db.OpenSessionAsync();
        var (volume, earlier) = await Prepare(session);

        var file = File();
        using var cts = CancelAt(driver, IsBlockRead); // the first lookup of the call's blocks
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await session.AddBlocksetAsync(file, new SelectXorInsertResult[file.Length], default, volume, cts.Token));
        driver.BeforeExecution = null;

        Assert.Equal(1, session.PendingWrites); // the earlier write only
        await session.CommitAsync();
        Assert.Equal(new BlockDbCounts(Stored + 1, 0, 0), await session.GetCountsAsync());
        Assert.Equal(earlier, await session.FindBlockAsync(TestData.Block(5_000, 100)));
        foreach (var key in file.Where((_, i) => i % 2 == 1))
        {
            Assert.Null(await session.FindBlockAsync(key));
        }

        // The same file then goes in whole, its new blocks created.
        var results = new SelectXorInsertResult[file.Length];
        var blocksetId = await session.AddBlocksetAsync(file, results, default, volume);
        Assert.Equal(file.Select((_, i) => i % 2 == 1), results.Select(r => r.Created));
        Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(blocksetId)).Select(b => b.BlockId));
    }

    [Theory]
    [MemberData(nameof(Layouts))]
    public async Task A_token_fired_once_the_writes_began_does_not_stop_the_file(BlockLayout layout)
    {
        var (driver, db) = Open(layout);
        await using var _ = db;
        await using var session = await db.OpenSessionAsync();
        var (volume, _) = await Prepare(session);

        var file = File();
        using var cts = CancelAt(driver, IsBlockInsert); // the first insert of the call's new blocks
        var results = new SelectXorInsertResult[file.Length];
        var blocksetId = await session.AddBlocksetAsync(file, results, default, volume, cts.Token);
        driver.BeforeExecution = null;

        Assert.True(cts.IsCancellationRequested);
        await session.CommitAsync();
        Assert.Equal(file.Select((_, i) => i % 2 == 1), results.Select(r => r.Created));
        Assert.Equal(results.Select(r => r.Id), (await session.ListBlocksetBlocksAsync(blocksetId)).Select(b => b.BlockId));
        Assert.Equal(new BlockDbCounts((2 * Stored) + 1, 1, file.Length), await session.GetCountsAsync());
        Assert.True((await db.CheckAsync()).IsClean);
    }

    /// <summary>A volume, <see cref="Stored"/> committed blocks, and one uncommitted write in the open batch; the volume and that write's ID.</summary>
    private static async Task<(long Volume, long Earlier)> Prepare(IBlockSession session)
    {
        var volume = await session.RegisterVolumeAsync("v.zip", VolumeState.Uploaded);
        await session.SelectXorInsertManyAsync(Enumerable.Range(0, Stored).Select(i => TestData.Block(i, 100)).ToArray(), new SelectXorInsertResult[Stored], volume);
        await session.CommitAsync();
        return (volume, (await session.SelectXorInsertAsync(TestData.Block(5_000, 100), volume)).Id);
    }

    /// <summary>A token that the driver cancels before the first statement that <paramref name="at"/> picks.</summary>
    private static CancellationTokenSource CancelAt(StatementCountingDriver driver, Func<SqlStatement, bool> at)
    {
        var cts = new CancellationTokenSource();
        driver.BeforeExecution = s =>
        {
            if (at(s))
            {
                cts.Cancel();
            }
        };
        return cts;
    }

    /// <summary>Stored and new blocks in turn: even positions stored, odd ones new.</summary>
    private static BlockKey[] File() =>
        [.. Enumerable.Range(0, 2 * Stored).Select(i => i % 2 == 0 ? TestData.Block(i / 2, 100) : TestData.Block(1_000 + i, 100))];

    /// <summary>A read of a block row by its key or ID (not the highest-ID reads of the ID floor).</summary>
    private static bool IsBlockRead(SqlStatement s) => s.Text.Contains("FROM \"Block\"", StringComparison.Ordinal) && !s.Text.Contains("MAX(", StringComparison.Ordinal);

    private static bool IsBlockInsert(SqlStatement s) => s.Text.Contains("INTO \"Block\"", StringComparison.Ordinal);

    private (StatementCountingDriver Driver, IBlockDatabase Db) Open(BlockLayout layout)
    {
        var driver = new StatementCountingDriver(PInvokeDriver.Instance);
        var options = new BlockDbOptions { DataSource = _folder.File("index.db"), Index = { Layout = layout }, Batching = { CommitEvery = 0 } };
        return (driver, new BlockDatabaseBuilder(options).UseSqliteDriver(driver).Build());
    }
}
