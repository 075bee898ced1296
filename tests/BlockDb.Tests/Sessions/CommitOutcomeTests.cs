using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Sessions;

/// <summary>
/// What a failed COMMIT tells the caller, on real files in DELETE journal mode (where the commit point is the
/// deletion of the rollback journal, https://www.sqlite.org/atomiccommit.html). A COMMIT that fails with SQLITE_BUSY
/// wrote nothing: the batch is lost, and said so. A COMMIT that fails once the database file was written (here:
/// the journal is gone when SQLite deletes it, SQLITE_IOERR_DELETE_NOENT, as when another process wrongly played
/// it back) may have committed: the error says the outcome is unknown, and repeating the writes finds them again
/// with their IDs and makes no duplicate.
/// </summary>
public sealed class CommitOutcomeTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string, BlockLayout> Cases()
    {
        var data = new TheoryData<string, BlockLayout>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            foreach (var layout in new[] { BlockLayout.KeyMap, BlockLayout.TextHash })
            {
                data.Add(provider, layout);
            }
        }

        return data;
    }

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task A_commit_that_fails_after_the_database_file_was_written_says_its_outcome_is_unknown_and_repeating_it_finds_the_same_ids(string provider, BlockLayout layout)
    {
        var path = _folder.File($"unknown-{provider}-{layout}.db");
        await using var db = Open(path, provider, layout);
        await using var session = await db.OpenSessionAsync();
        var before = await session.SelectXorInsertAsync(TestData.Block(1, 100));
        await session.AddBlocksetAsync([TestData.Block(1, 100)]);
        await session.CommitAsync();

        var ids = new List<long>();
        for (var i = 2; i <= 6; i++)
        {
            ids.Add((await session.SelectXorInsertAsync(TestData.Block(i, 100 + i))).Id);
        }

        var blockset = await session.AddBlocksetAsync([.. Enumerable.Range(2, 5).Select(i => TestData.Block(i, 100 + i))]);
        Assert.True(File.Exists(path + "-journal"), "the open batch has no rollback journal to take away");
        File.Delete(path + "-journal");

        var failure = await Assert.ThrowsAsync<BlockDbBatchRolledBackException>(async () => await session.CommitAsync());
        Assert.True(failure.CommitOutcomeUnknown, failure.Message);
        Assert.Equal(SqliteResultCode.IOError, failure.SqliteErrorCode);
        Assert.Equal(6, failure.LostWrites);
        Assert.Contains("unknown", failure.Message, StringComparison.Ordinal);

        // Here SQLite had written the file, so the batch did commit: repeating it finds every block at its ID.
        for (var i = 2; i <= 6; i++)
        {
            var again = await session.SelectXorInsertAsync(TestData.Block(i, 100 + i));
            Assert.False(again.Created, $"block {i} was inserted a second time after the unknown commit");
            Assert.Equal(ids[i - 2], again.Id);
        }

        Assert.Equal(5, (await session.ListBlocksetBlocksAsync(blockset)).Count);
        var next = await session.SelectXorInsertAsync(TestData.Block(7, 107));
        Assert.True(next.Created);
        Assert.DoesNotContain(next.Id, ids.Append(before.Id));
        await session.CommitAsync();

        await using var reopened = Open(path, provider, layout);
        var check = await reopened.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
        Assert.Equal(7, check.Counts.Blocks);
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task A_commit_refused_with_busy_is_a_known_loss_and_nothing_of_it_is_in_the_file(string provider, BlockLayout layout)
    {
        var path = _folder.File($"busy-{provider}-{layout}.db");
        await using var db = Open(path, provider, layout, busyTimeout: 50);
        await using var session = await db.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1, 100));
        await session.CommitAsync();
        var created = await session.SelectXorInsertAsync(TestData.Block(2, 100));
        Assert.True(created.Created);

        // A reader in another connection holds a SHARED lock: in DELETE mode the COMMIT cannot get EXCLUSIVE.
        using (var reader = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadOnly)))
        {
            reader.Execute("BEGIN");
            Assert.Equal("1", reader.QueryText("""SELECT COUNT(*) FROM "Block" """));
            var failure = await Assert.ThrowsAsync<BlockDbBatchRolledBackException>(async () => await session.CommitAsync());
            Assert.False(failure.CommitOutcomeUnknown, failure.Message);
            Assert.True(failure.IsTransient || failure.SqliteErrorCode is SqliteResultCode.Busy, failure.Message);
            Assert.Equal(1, failure.LostWrites);
            reader.Execute("COMMIT");
        }

        Assert.Null(await session.FindBlockAsync(TestData.Block(2, 100)));
        var again = await session.SelectXorInsertAsync(TestData.Block(2, 100));
        Assert.True(again.Created);
        await session.CommitAsync();
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
        Assert.Equal(2, check.Counts.Blocks);
    }

    private static IBlockDatabase Open(string path, string provider, BlockLayout layout, int busyTimeout = 1000) =>
        BlockDatabase.Open(new BlockDbOptions
        {
            Provider = provider,
            DataSource = path,
            Index = { Layout = layout },
            Batching = { CommitEvery = 0 },
            Pragmas = { JournalMode = JournalMode.Delete, BusyTimeout = busyTimeout },
        });
}
