namespace BlockDb.Tests.Diagnostics;

/// <summary>
/// The check, the repair and the bulk import log their events (docs/OBSERVABILITY.md: 30 CheckFinished,
/// 31 RepairFinished, 40 ImportFinished) on every engine, PostgreSQL included: Core's database front end logs them once.
/// </summary>
public sealed class MaintenanceEventsTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Check_repair_and_import_each_log_their_event_once(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        using var logs = new CapturingLoggerFactory();
        await using var db = new BlockDatabaseBuilder(Options()).UseLoggerFactory(logs).Build();

        var imported = await db.ImportBlocksAsync(Stream(TestData.Bytes(1), TestData.Bytes(2)));
        Assert.Equal(2, imported.Created);
        Assert.True((await db.CheckAsync()).IsClean);
        await db.RepairAsync();

        Assert.Equal(1, logs.Count(40, "ImportFinished"));
        Assert.Equal(1, logs.Count(30, "CheckFinished")); // the repair's own check after its work is part of the repair
        Assert.Equal(1, logs.Count(31, "RepairFinished"));
    }

    private static async IAsyncEnumerable<ImportBlock> Stream(params BlockHash[] hashes)
    {
        foreach (var hash in hashes)
        {
            await Task.Yield();
            yield return new ImportBlock(new BlockKey(hash, 10));
        }
    }
}
