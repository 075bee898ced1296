using System.Globalization;
using BlockDb.Drivers;

namespace BlockDb.Tests.Conversion;

/// <summary>
/// <see cref="BlockDbConverter"/> and the schema objects of the backup engine that keeps its own tables in the BlockDb
/// file: each is carried into the new file unchanged (tables with every row at its rowid, then their indexes, views and
/// triggers, which then work there), or the conversion is refused, naming the object, before anything is kept.
/// </summary>
public sealed class ForeignObjectTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    /// <summary>Every pair of distinct layouts, with every SQLite provider.</summary>
    public static TheoryData<BlockLayout, BlockLayout, string> Pairs()
    {
        var data = new TheoryData<BlockLayout, BlockLayout, string>();
        foreach (var provider in BlockDbProviders.Names)
        {
            foreach (var from in Enum.GetValues<BlockLayout>())
            {
                foreach (var to in Enum.GetValues<BlockLayout>().Where(l => l != from))
                {
                    data.Add(from, to, provider);
                }
            }
        }

        return data;
    }

    /// <summary>The pairs of distinct layouts whose files may hold triggers of another application (KeyMap allows none), with every SQLite provider.</summary>
    public static TheoryData<BlockLayout, BlockLayout, string> TriggerPairs()
    {
        var data = new TheoryData<BlockLayout, BlockLayout, string>();
        foreach (var provider in BlockDbProviders.Names)
        {
            data.Add(BlockLayout.TextHash, BlockLayout.BlobHash, provider);
            data.Add(BlockLayout.BlobHash, BlockLayout.TextHash, provider);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_foreign_table_is_carried_with_every_row_at_its_rowid_and_its_index_and_view_work_in_the_new_file(BlockLayout from, BlockLayout to, string provider)
    {
        var source = await SourceAsync("source.db", from, provider);
        using (var raw = new RawSql(source.DataSource!, provider))
        {
            raw.Execute("""CREATE TABLE "FileLookup" ("Path" TEXT NOT NULL, "BlocksetID" INTEGER NOT NULL, "Score" REAL)""");
            raw.Execute("""INSERT INTO "FileLookup" ("rowid", "Path", "BlocksetID", "Score") VALUES (3, '/etc/passwd', 1, 0.1), (7, '/etc/group', 2, NULL), (1000, '/bin/sh', 1, 1e300)""");
            raw.Execute("""CREATE INDEX "FileLookupPath" ON "FileLookup" ("Path")""");
            raw.Execute("""CREATE VIEW "FileLength" AS SELECT f."Path", b."Length" FROM "FileLookup" f JOIN "Blockset" b ON b."ID" = f."BlocksetID" """);
        }

        var target = Options("target.db", to, provider);
        var result = await BlockDbConverter.ConvertAsync(source, target);

        Assert.True(result.Check.IsClean, result.Check.ToString());
        Assert.Equal(["FileLookup", "FileLookupPath", "FileLength"], result.CarriedObjects);
        Assert.Equal(3, result.CarriedRows);
        AssertSameObjects(source.DataSource!, target.DataSource!, "FileLookup", "FileLookupPath", "FileLength");
        AssertSameRows(source.DataSource!, target.DataSource!, """SELECT "rowid", typeof("Path"), "Path", "BlocksetID", typeof("Score"), "Score" FROM "FileLookup" """);
        using var converted = new RawSql(target.DataSource!, provider);
        Assert.Equal("ok", converted.Text("PRAGMA integrity_check"));
        Assert.Equal(7, converted.Scalar("""SELECT "rowid" FROM "FileLookup" INDEXED BY "FileLookupPath" WHERE "Path" = '/etc/group'"""));
        Assert.Equal("/bin/sh:500|/etc/group:300|/etc/passwd:500", converted.Text("""SELECT group_concat("Path" || ':' || "Length", '|') FROM (SELECT * FROM "FileLength" ORDER BY "Path")"""));
    }

    private async Task<BlockDbOptions> SourceAsync(string name, BlockLayout layout, string provider)
    {
        var source = Options(name, layout, provider);
        await using var db = BlockDatabase.Open(source);
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("b-1.zip", VolumeState.Uploaded);
        var a = (await session.SelectXorInsertAsync(TestData.Hash(1), 100, volume)).Id;
        var b = (await session.SelectXorInsertAsync(TestData.Hash(2), 200, volume)).Id;
        Assert.Equal(1, await session.AddBlocksetAsync([a, b, b]));
        Assert.Equal(2, await session.AddBlocksetAsync([b, a]));
        await session.CommitAsync();
        return source;
    }

    private BlockDbOptions Options(string name, BlockLayout layout, string provider) =>
        new() { Provider = provider, DataSource = _folder.File(name), Index = { Layout = layout }, Batching = { CommitEvery = 0 } };

    /// <summary>Each object of <paramref name="names"/> has the same type, table and SQL text in both files.</summary>
    private static void AssertSameObjects(string source, string target, params string[] names)
    {
        using var raw = new RawSql(target);
        raw.Execute($"ATTACH DATABASE '{source.Replace("'", "''", StringComparison.Ordinal)}' AS \"src\"");
        foreach (var name in names)
        {
            var where = $"WHERE \"name\" = '{name.Replace("'", "''", StringComparison.Ordinal)}'";
            Assert.Equal(1, raw.Scalar($"SELECT COUNT(*) FROM \"src\".sqlite_schema {where}"));
            Assert.Equal(
                raw.Text($"SELECT \"type\" || '|' || \"tbl_name\" || '|' || \"sql\" FROM \"src\".sqlite_schema {where}"),
                raw.Text($"SELECT \"type\" || '|' || \"tbl_name\" || '|' || \"sql\" FROM main.sqlite_schema {where}"));
        }
    }

    /// <summary><paramref name="select"/> returns the same rows (values and storage classes) from both files, and some.</summary>
    private static void AssertSameRows(string source, string target, string select)
    {
        using var raw = new RawSql(target);
        raw.Execute($"ATTACH DATABASE '{source.Replace("'", "''", StringComparison.Ordinal)}' AS \"src\"");
        var fromSource = select.Replace("FROM \"", "FROM \"src\".\"", StringComparison.Ordinal);
        Assert.True(raw.Scalar($"SELECT COUNT(*) FROM ({fromSource})") > 0, "the source table is empty");
        Assert.Equal(raw.Scalar($"SELECT COUNT(*) FROM ({fromSource})"), raw.Scalar($"SELECT COUNT(*) FROM ({select})"));
        Assert.Equal(0, raw.Scalar($"SELECT COUNT(*) FROM ({fromSource} EXCEPT {select})"));
        Assert.Equal(0, raw.Scalar($"SELECT COUNT(*) FROM ({select} EXCEPT {fromSource})"));
    }
}
