using BlockDb.Duplicati.Fixture;
using BlockDb.MicrosoftData;
using Microsoft.Data.Sqlite;
using static BlockDb.Tests.Duplicati.DuplicatiSessions;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// Inside Duplicati's own transaction (its connection, its always-open deferred transaction): BlockDb's rows and the
/// engine's commit together when the caller commits, go together when it rolls back, and BlockDb commits nothing itself
/// (another connection sees none of its rows before the caller's commit).
/// </summary>
public sealed class DuplicatiCallerTransactionTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private const string Rows = """SELECT (SELECT COUNT(*) FROM "Operation") || '|' || (SELECT COUNT(*) FROM "Remotevolume") || '|' || (SELECT COUNT(*) FROM "Block") || '|' || (SELECT COUNT(*) FROM "Blockset") || '|' || (SELECT COUNT(*) FROM "BlocksetEntry") || '|' || (SELECT COUNT(*) FROM "BlocklistHash") || '|' || (SELECT COUNT(*) FROM "DeletedBlock")""";

    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public async Task The_callers_rollback_takes_BlockDbs_rows_with_its_own_and_its_commit_keeps_both()
    {
        var path = template.CopyTo(_folder);
        var before = DuplicatiFiles.Column(path, Rows);
        using var connection = DuplicatiConnection.Open(path);

        // Round 1: the engine's Operation row and BlockDb's volume, blocks and blockset, then the caller rolls back.
        using (var transaction = new DuplicatiTransaction(connection))
        {
            await WriteBothSidesAsync(connection, transaction, "rolled-back");
            Assert.Equal(before, DuplicatiFiles.Column(path, Rows)); // BlockDb committed nothing
        }

        Assert.Equal(before, DuplicatiFiles.Column(path, Rows));

        // Round 2: the same, committed by the caller.
        using (var transaction = new DuplicatiTransaction(connection))
        {
            var blockset = await WriteBothSidesAsync(connection, transaction, "committed");
            Assert.Equal(before, DuplicatiFiles.Column(path, Rows));
            transaction.Commit("AddBlockset");
            Assert.Equal(1, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Operation" WHERE "Description" = 'committed'"""));
            Assert.Equal(File("committed", 33).Count, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "BlocksetEntry" WHERE "BlocksetID" = {blockset}"""));
            Assert.Equal(2, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "BlocklistHash" WHERE "BlocksetID" = {blockset}"""));
        }

        Assert.NotEqual(before, DuplicatiFiles.Column(path, Rows));
        connection.Close();
        await AssertCleanAsync(path);
    }

    /// <summary>The engine inserts its Operation row; BlockDb, on the same connection and transaction, registers a volume (under that operation) and writes a file; returns its blockset.</summary>
    private static async Task<long> WriteBothSidesAsync(SqliteConnection connection, DuplicatiTransaction transaction, string tag)
    {
        using (var command = connection.CreateCommand())
        {
            command.Transaction = transaction.Current;
            command.CommandText = """INSERT INTO "Operation" ("Description", "Timestamp") VALUES (@Description, 0)""";
            command.Parameters.AddWithValue("@Description", tag);
            command.ExecuteNonQuery();
        }

        await using var db = new BlockDatabaseBuilder(new BlockDbOptions()).UseCallerConnection(MicrosoftDataDriver.Instance.Borrow(connection)).Build();
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync($"duplicati-b{tag}.dblock.zip");
        var blockset = await AddFileAsync(session, File(tag, 33), volume, FullHash(tag));
        Assert.Equal(
            [tag],
            DuplicatiFilesOn(connection, transaction, $"""SELECT O."Description" FROM "Remotevolume" V JOIN "Operation" O ON O."ID" = V."OperationID" WHERE V."ID" = {volume}"""));

        // The check runs in the caller's transaction and sees its uncommitted rows, BlockDb's and the engine's.
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
        Assert.Equal(await session.GetCountsAsync(), check.Counts);
        return blockset;
    }

    private static List<string> DuplicatiFilesOn(SqliteConnection connection, DuplicatiTransaction transaction, string sql)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction.Current;
        command.CommandText = sql;
        using var reader = command.ExecuteReader();
        var values = new List<string>();
        while (reader.Read())
        {
            values.Add(reader.GetString(0));
        }

        return values;
    }
}
