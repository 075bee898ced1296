namespace BlockDb.Tests.Blocks;

/// <summary>
/// A new block's and a new blockset's ID is read from the connection after the insert (<c>last_insert_rowid()</c>, no
/// <c>RETURNING</c>): it is still the new row's own ID when a foreign application's trigger on <c>Block</c> and
/// <c>Blockset</c> inserts rows into its own table (SQLite restores the value when a trigger ends,
/// <see href="https://www.sqlite.org/c3ref/last_insert_rowid.html"/>), for every SQLite provider, layout and strategy,
/// single calls and a blockset's blocks alike. (KeyMap refuses a file with foreign triggers.)
/// </summary>
public sealed class NewRowIdTests : ConformanceTestBase
{
    /// <summary>The SQLite providers × the indexed layouts × their strategies (KeyMap refuses a file with foreign triggers).</summary>
    public static IEnumerable<object[]> IndexedWithStrategies() => MatrixWithStrategies().Where(row => (BlockLayout)row[1] != BlockLayout.KeyMap);

    [Theory]
    [MemberData(nameof(IndexedWithStrategies))]
    public async Task A_new_rows_id_is_its_own_when_a_foreign_trigger_inserts_elsewhere(string provider, BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        Use(provider, layout);
        await using (var db = Open(o => o.SelectXorInsert = strategy))
        {
            await using var session = await db.OpenSessionAsync();
            await session.SelectXorInsertAsync(TestData.Block(0, 100));
            await session.CommitAsync();
        }

        using (var raw = new RawSql(DbPath))
        {
            // The audit table's rowids start far above BlockDb's, so a leaked audit rowid cannot pass for a block's.
            raw.Execute("""CREATE TABLE "ForeignAudit" ("ID" INTEGER PRIMARY KEY, "What" TEXT NOT NULL)""");
            raw.Execute("""INSERT INTO "ForeignAudit" ("ID", "What") VALUES (1000000, 'start')""");
            raw.Execute("""CREATE TRIGGER "ForeignBlockAudit" AFTER INSERT ON "Block" BEGIN INSERT INTO "ForeignAudit" ("What") VALUES ('block'); END""");
            raw.Execute("""CREATE TRIGGER "ForeignBlocksetAudit" AFTER INSERT ON "Blockset" BEGIN INSERT INTO "ForeignAudit" ("What") VALUES ('blockset'); END""");
        }

        var single = new List<(SelectXorInsertResult Result, long Size)>();
        long blocksetId;
        var results = new SelectXorInsertResult[3];
        await using (var db = Open(o => o.SelectXorInsert = strategy))
        {
            await using var session = await db.OpenSessionAsync();
            for (var i = 1; i <= 3; i++)
            {
                single.Add((await session.SelectXorInsertAsync(TestData.Block(i, 200 + i)), 200 + i));
            }

            blocksetId = await session.AddBlocksetAsync(new[] { TestData.Block(10, 310), TestData.Block(11, 311), TestData.Block(1, 201) }, results);
            await session.CommitAsync();
        }

        using var check = new RawSql(DbPath);
        Assert.True(check.Scalar("""SELECT COUNT(*) FROM "ForeignAudit" """) > 1, "the foreign triggers did not run");
        foreach (var (result, size) in single)
        {
            Assert.True(result.Created);
            Assert.Equal(check.Scalar($"""SELECT "ID" FROM "Block" WHERE "Size" = {size}"""), result.Id);
        }

        Assert.Equal([true, true, false], results.Select(r => r.Created));
        Assert.Equal(check.Scalar("""SELECT "ID" FROM "Block" WHERE "Size" = 310"""), results[0].Id);
        Assert.Equal(check.Scalar("""SELECT "ID" FROM "Block" WHERE "Size" = 311"""), results[1].Id);
        Assert.Equal(single[0].Result.Id, results[2].Id);
        Assert.Equal(check.Scalar("""SELECT MAX("ID") FROM "Blockset" """), blocksetId);
        Assert.Equal(3, check.Scalar($"""SELECT COUNT(*) FROM "BlocksetEntry" WHERE "BlocksetID" = {blocksetId}"""));
    }
}
