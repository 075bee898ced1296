namespace BlockDb.Tests.SharedSession;

/// <summary>
/// The shared session's many-block calls run whole (in a savepoint of the writer's transaction), yet a call whose
/// blocks are all known still takes no write lock, as separate select-xor-inserts would not: it reads beside another
/// process's open write transaction.
/// </summary>
public sealed class SharedSpanLockTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_span_of_known_blocks_completes_while_another_writer_holds_the_lock(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => BusyTimeout(o, 200));
        await using var shared = db.OpenSharedSession();
        var blocks = Enumerable.Range(0, 1_000).Select(i => TestData.Block(i, 4096)).ToArray();
        var first = new SelectXorInsertResult[blocks.Length];
        Assert.Equal(blocks.Length, await shared.SelectXorInsertManyAsync(blocks, first));

        using var other = new RawSql(DbPath, busyTimeoutMilliseconds: 200);
        other.Execute("BEGIN IMMEDIATE");
        try
        {
            var again = new SelectXorInsertResult[blocks.Length];
            Assert.Equal(0, await shared.SelectXorInsertManyAsync(blocks, again));
            Assert.Equal(first.Select(r => r.Id), again.Select(r => r.Id));
        }
        finally
        {
            other.Execute("ROLLBACK");
        }
    }
}
