using BlockDb.MicrosoftData;
using Microsoft.Data.Sqlite;
using SQLitePCL;

namespace BlockDb.Tests.Blocksets;

/// <summary>
/// A one-call file on a caller's connection whose write fails among its writes (a foreign partial unique index): the
/// call's step savepoint is its unit, so the call fails alone, and the caller's transaction, its rows and BlockDb's
/// earlier rows in it stay.
/// </summary>
public sealed class OneCallFileCallerConnectionFailureTests : IDisposable
{
    private readonly TempFolder _folder = new();
    private readonly string _path;

    public OneCallFileCallerConnectionFailureTests() => _path = _folder.File("index.db");

    public void Dispose() => _folder.Dispose();

    public static TheoryData<BlockLayout> Layouts => [BlockLayout.TextHash, BlockLayout.BlobHash];

    [Theory]
    [MemberData(nameof(Layouts))]
    public async Task A_failing_write_of_a_one_call_file_fails_only_the_call_in_the_callers_transaction(BlockLayout layout)
    {
        using (new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _path, Index = { Layout = layout } }).UseSqliteDriver(MicrosoftDataDriver.Instance).Build())
        {
        }

        using (var setup = Open())
        {
            Execute(setup, """CREATE TABLE "CallerFile" ("ID" INTEGER PRIMARY KEY, "Path" TEXT NOT NULL)""");
            Execute(setup, """CREATE UNIQUE INDEX "RefuseEntry" ON "BlocksetEntry" ("BlockID") WHERE "Index" = 2""");
        }

        using var caller = Open();
        var transaction = caller.BeginTransaction(deferred: true);
        Execute(caller, """INSERT INTO "CallerFile" ("Path") VALUES ('a.txt')""", transaction);
        await using (var blocks = new BlockDatabaseBuilder(new BlockDbOptions()).UseCallerConnection(MicrosoftDataDriver.Instance.Borrow(caller)).Build())
        await using (var session = await blocks.OpenSessionAsync())
        {
            var volume = await session.RegisterVolumeAsync("v1");
            var earlier = await session.SelectXorInsertAsync(TestData.Block(1, 100), volume);

            // An earlier file names block 1 at index 2; the failing file does too, after two new blocks.
            await session.AddBlocksetAsync(new[] { TestData.Block(9, 10), TestData.Block(8, 10), TestData.Block(1, 100) }, new SelectXorInsertResult[3], volumeId: volume);
            BlockKey[] failing = [TestData.Block(3, 30), TestData.Block(4, 40), TestData.Block(1, 100)];
            var e = await Record.ExceptionAsync(async () => await session.AddBlocksetAsync(failing, new SelectXorInsertResult[3], volumeId: volume));
            Assert.NotNull(e);
            Assert.True(e is not BlockDbBatchRolledBackException, $"{e.GetType().Name}: {e.Message}");
            Assert.True(raw.sqlite3_get_autocommit(caller.Handle!) == 0, "the caller's transaction ended");
            Assert.Equal(earlier.Id, await session.FindBlockAsync(TestData.Block(1, 100)));
            Assert.Null(await session.FindBlockAsync(TestData.Block(3, 30)));
            Assert.Null(await session.FindBlockAsync(TestData.Block(4, 40)));
            Assert.Equal(new BlockDbCounts(3, 1, 3), await session.GetCountsAsync());
        }

        transaction.Commit();
        using var check = Open();
        Assert.Equal("1", Query(check, """SELECT COUNT(*) FROM "CallerFile" """));
        Assert.Equal("3", Query(check, """SELECT COUNT(*) FROM "Block" """));
        Assert.Equal("1", Query(check, """SELECT COUNT(*) FROM "Blockset" """));
    }

    private SqliteConnection Open()
    {
        var connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = _path, Pooling = false, DefaultTimeout = 2 }.ToString());
        connection.Open();
        return connection;
    }

    private static void Execute(SqliteConnection connection, string sql, SqliteTransaction? transaction = null)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = sql;
        command.ExecuteNonQuery();
    }

    private static string? Query(SqliteConnection connection, string sql)
    {
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        return Convert.ToString(command.ExecuteScalar(), System.Globalization.CultureInfo.InvariantCulture);
    }
}
