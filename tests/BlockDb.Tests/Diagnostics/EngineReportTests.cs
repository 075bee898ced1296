namespace BlockDb.Tests.Diagnostics;

/// <summary>
/// What a database reports about its engine, for every provider and layout: page-cache counters where the provider
/// exposes them, and the native SQLite version.
/// </summary>
public sealed class EngineReportTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Page_cache_counters_count_reads_where_the_provider_exposes_them(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1, 10));
        await session.CommitAsync();
        var before = session.ReadCacheStats();
        if (Provider == "SystemData")
        {
            Assert.Null(before); // System.Data.SQLite does not expose its sqlite3* handle (nor sqlite3_db_status)
            return;
        }

        for (var i = 0; i < 100; i++)
        {
            Assert.NotNull(await session.FindBlockAsync(TestData.Block(1, 10)));
        }

        var reads = session.ReadCacheStats()!.Value.Since(before!.Value);
        Assert.InRange(reads.Hits, 100, 100_000);
        Assert.Equal(0, reads.Writes);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_native_sqlite_version_is_reported(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        Assert.Matches(@"^3\.\d+\.\d+$", db.SqliteVersion);
        Assert.Equal(BlockDbProviders.Get(Provider).NativeLibraryVersion, db.SqliteVersion);
    }
}
