using BlockDb.Opening;

namespace BlockDb.Tests.Diagnostics;

/// <summary>
/// What a database reports about its engine, for every provider and layout: page-cache counters (every SQLite provider
/// exposes them), and the native SQLite version.
/// </summary>
public sealed class EngineReportTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Page_cache_counters_count_reads_on_every_provider(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        var sqlite = (ISqliteBlockDatabase)db;
        await using var session = await db.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1, 10));
        await session.CommitAsync();
        var before = sqlite.ReadCacheStats();
        for (var i = 0; i < 100; i++)
        {
            Assert.NotNull(await session.FindBlockAsync(TestData.Block(1, 10)));
        }

        var reads = sqlite.ReadCacheStats()!.Value.Since(before!.Value);
        Assert.InRange(reads.Hits, 100, 100_000);
        Assert.Equal(0, reads.Writes);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Page_cache_counters_keep_the_reads_of_closed_sessions_and_never_go_down(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        var sqlite = (ISqliteBlockDatabase)db;
        var start = sqlite.ReadCacheStats();

        // Each session writes its block first, so its finds read its cached pages (reads through mmap bypass the cache).
        await using var open = await db.OpenSessionAsync();
        await open.SelectXorInsertAsync(TestData.Block(1, 10));
        await open.CommitAsync();
        await using (var closing = await db.OpenSessionAsync())
        {
            await closing.SelectXorInsertAsync(TestData.Block(2, 10));
            await closing.CommitAsync();
            for (var i = 0; i < 100; i++)
            {
                Assert.NotNull(await closing.FindBlockAsync(TestData.Block(2, 10)));
                Assert.NotNull(await open.FindBlockAsync(TestData.Block(1, 10)));
            }
        }

        // One session closed, one open: the total holds the reads and writes of both.
        var total = sqlite.ReadCacheStats()!.Value.Since(start!.Value);
        Assert.True(total.Hits >= 200, total.ToString());
        Assert.True(total.Writes >= 2, total.ToString());
        await using (var third = await db.OpenSessionAsync())
        {
        }

        var later = sqlite.ReadCacheStats()!.Value.Since(start.Value);
        Assert.True(later.Hits >= total.Hits && later.Misses >= total.Misses && later.Writes >= total.Writes, $"{later} after {total}");
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_native_sqlite_version_is_reported(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        Assert.Matches(@"^3\.\d+\.\d+$", db.EngineVersion);
        Assert.Equal(ProviderCatalog.SqliteDriver(Provider).NativeLibraryVersion, db.EngineVersion);
    }
}
