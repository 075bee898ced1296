using System.Globalization;
using System.Text;
using BlockDb.MicrosoftData;
using Microsoft.Data.Sqlite;

namespace BlockDb.Tests.CallerTransaction;

/// <summary>
/// Every session operation on a caller's connection (<see cref="BlockDatabaseBuilder.UseCallerConnection"/>) answers as
/// it does on BlockDb's own connection, and leaves the same rows: one script of calls (blocks one by one and as a span,
/// blocksets by keys, IDs and in one call, volumes registered, moved and retired, a blockset deleted, collection, the
/// reads, the listings and the check) runs on two files of the same layout, one standalone and one inside a caller's
/// transaction that the caller commits half-way and at the end; the transcripts and the final tables must be equal.
/// </summary>
public sealed class CallerOperationsTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static TheoryData<BlockLayout, SelectXorInsertStrategy> Cases() => new()
    {
        { BlockLayout.TextHash, SelectXorInsertStrategy.SelectThenInsert },
        { BlockLayout.TextHash, SelectXorInsertStrategy.InsertOrIgnoreThenSelect },
        { BlockLayout.BlobHash, SelectXorInsertStrategy.SelectThenInsert },
        { BlockLayout.BlobHash, SelectXorInsertStrategy.InsertOrIgnoreThenSelect },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Every_operation_on_a_callers_connection_answers_and_writes_as_it_does_standalone(BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        var own = _folder.File("own.db");
        var borrowed = _folder.File("caller.db");
        foreach (var path in new[] { own, borrowed })
        {
            using var create = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = path, Index = { Layout = layout } }).UseSqliteDriver(MicrosoftDataDriver.Instance).Build();
        }

        string standalone;
        await using (var db = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = own, SelectXorInsert = strategy }).UseSqliteDriver(MicrosoftDataDriver.Instance).Build())
        {
            standalone = await Script(db, halfway: null);
        }

        string inCaller;
        using (var caller = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = borrowed, Pooling = false }.ToString()))
        {
            caller.Open();
            var transaction = caller.BeginTransaction(deferred: true);
            await using (var db = new BlockDatabaseBuilder(new BlockDbOptions { SelectXorInsert = strategy }).UseCallerConnection(MicrosoftDataDriver.Instance.Borrow(caller)).Build())
            {
                inCaller = await Script(db, halfway: () =>
                {
                    // Duplicati's checkpoint: commit, and a new deferred transaction at once.
                    transaction.Commit();
                    transaction.Dispose();
                    transaction = caller.BeginTransaction(deferred: true);
                });
            }

            transaction.Commit();
            transaction.Dispose();
        }

        Assert.Equal(standalone, inCaller);
        Assert.Equal(Tables(own), Tables(borrowed));
    }

    /// <summary>Runs the script and returns its transcript.</summary>
    private static async Task<string> Script(IBlockDatabase db, Action? halfway)
    {
        var log = new StringBuilder();
        void Note(object? value) => log.Append(CultureInfo.InvariantCulture, $"{value}\n");

        await using (var session = await db.OpenSessionAsync())
        {
            var v1 = await session.RegisterVolumeAsync("dup-b1.zip");
            var v2 = await session.RegisterVolumeAsync("dup-b2.zip");
            Note((v1, v2));
            var ids = new List<long>();
            for (var i = 0; i < 20; i++)
            {
                var result = await session.SelectXorInsertAsync(TestData.Block(i, 1000 + i), i < 10 ? v1 : v2);
                ids.Add(result.Id);
                Note(result);
            }

            Note(await session.SelectXorInsertAsync(TestData.Block(3, 1003), v1));
            Note(await session.FindBlockAsync(TestData.Block(5, 1005)));
            Note(await session.FindBlockAsync(TestData.Block(50, 1)));
            Note((await session.SelectXorInsertAsync(TestData.Block(21, 21), v2)).Id);

            BlockKey[] span = [TestData.Block(1, 1001), TestData.Block(30, 30), TestData.Block(31, 31)];
            var results = new SelectXorInsertResult[span.Length];
            Note(await session.SelectXorInsertManyAsync(span, results, v2));
            Note(string.Join(",", results));

            var byIds = await session.AddBlocksetAsync(ids.Take(4).ToList(), TestData.Hash(100));
            var byKeys = await session.AddBlocksetAsync([TestData.Block(0, 1000), TestData.Block(7, 1007)], TestData.Hash(101));
            var fileBlocks = new[] { TestData.Block(40, 40), TestData.Block(41, 41), TestData.Block(2, 1002) };
            var fileResults = new SelectXorInsertResult[fileBlocks.Length];
            var oneCall = await session.AddBlocksetAsync(fileBlocks, fileResults, TestData.Bytes(102), v1);
            Note((byIds, byKeys, oneCall, string.Join(",", fileResults)));
            Note(await session.AddBlocksetAsync(ids.Take(4).ToList(), TestData.Hash(100)));
            Note(await session.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(101)), 2007));
            Note(await session.GetBlocksetAsync(byIds));
            Note(string.Join(",", await session.ListBlocksetBlocksAsync(oneCall)));
            Note(await session.GetBlockAsync(ids[2]));
            Note(await session.GetCountsAsync());

            halfway?.Invoke();

            // A failing call in the middle: refused whole, nothing of it stays.
            await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.AddBlocksetAsync(new[] { TestData.Block(9_999, 10) }, new SelectXorInsertResult[1], BlockHash.Parse(TestData.Hash(103)), 9_999_999));

            Note(await session.MoveBlocksAsync([ids[10], ids[11]], v1));
            await session.SetVolumeStateAsync(v1, VolumeState.Uploaded, 12345);
            await session.SetVolumeStateAsync(v2, VolumeState.Deleting);
            Note(await session.GetVolumeAsync(v1));
            Note(await session.FindVolumeAsync("dup-b2.zip"));
            await session.DeleteBlocksetAsync(byKeys);
            var collected = await session.DeleteUnreferencedBlocksAsync(v2);
            Note((collected.Blocks, collected.Bytes, string.Join(",", collected.ByVolume)));
            Note(await session.GetCountsAsync());
        }

        await foreach (var block in db.EnumerateBlocksAsync(new BlockFilter { UnreferencedOnly = true }))
        {
            Note(block);
        }

        await foreach (var blockset in db.EnumerateBlocksetsAsync())
        {
            Note(blockset);
        }

        await foreach (var volume in db.EnumerateVolumesAsync())
        {
            Note(volume);
        }

        var check = await db.CheckAsync();
        Note(check.IsClean);
        return log.ToString();
    }

    /// <summary>The four tables' rows, in ID order, as another connection sees them (what was committed).</summary>
    private static string Tables(string path)
    {
        using var connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = path, Pooling = false, Mode = SqliteOpenMode.ReadOnly }.ToString());
        connection.Open();
        var text = new StringBuilder();
        foreach (var query in new[]
        {
            """SELECT "ID", quote("Hash"), "Size", "VolumeID" FROM "Block" ORDER BY "ID" """,
            """SELECT "ID", "Length", "FullHash" FROM "Blockset" ORDER BY "ID" """,
            """SELECT "BlocksetID", "Index", "BlockID" FROM "BlocksetEntry" ORDER BY "BlocksetID", "Index" """,
            """SELECT "ID", "Name", "State", "Size" FROM "Remotevolume" ORDER BY "ID" """,
        })
        {
            using var command = connection.CreateCommand();
            command.CommandText = query;
            using var reader = command.ExecuteReader();
            while (reader.Read())
            {
                for (var i = 0; i < reader.FieldCount; i++)
                {
                    text.Append(CultureInfo.InvariantCulture, $"{reader.GetValue(i)}|");
                }

                text.Append('\n');
            }
        }

        return text.ToString();
    }
}
