using System.Globalization;
using BlockDb.Drivers;
using BlockDb.Opening;

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
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            foreach (var from in LayoutCatalog.Created)
            {
                foreach (var to in LayoutCatalog.Created.Where(l => l != from))
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
        foreach (var provider in ProviderCatalog.SqliteNames)
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

    [Theory]
    [MemberData(nameof(TriggerPairs))]
    public async Task A_trigger_is_created_after_the_rows_are_copied_and_fires_in_the_new_file(BlockLayout from, BlockLayout to, string provider)
    {
        var source = await SourceAsync("trigger.db", from, provider);
        using (var raw = new RawSql(source.DataSource!, provider))
        {
            raw.Execute("""CREATE TABLE "File" ("ID" INTEGER PRIMARY KEY, "Path" TEXT NOT NULL, "BlocksetID" INTEGER NOT NULL)""");
            raw.Execute("""CREATE TABLE "Changes" ("What" TEXT NOT NULL)""");
            raw.Execute("""CREATE TRIGGER "FileAdded" AFTER INSERT ON "File" BEGIN INSERT INTO "Changes" ("What") VALUES ('file ' || NEW."Path"); END""");
            raw.Execute("""CREATE TRIGGER "BlocksetAdded" AFTER INSERT ON "Blockset" BEGIN INSERT INTO "Changes" ("What") VALUES ('blockset ' || NEW."ID"); END""");
            raw.Execute("""INSERT INTO "File" ("ID", "Path", "BlocksetID") VALUES (5, '/a', 1), (9, '/b', 2)""");
        }

        var target = Options("trigger-target.db", to, provider);
        var result = await BlockDbConverter.ConvertAsync(source, target);

        Assert.True(result.Check.IsClean, result.Check.ToString());
        Assert.Equal(["File", "Changes", "FileAdded", "BlocksetAdded"], result.CarriedObjects);
        Assert.Equal(4, result.CarriedRows);
        AssertSameObjects(source.DataSource!, target.DataSource!, "File", "Changes", "FileAdded", "BlocksetAdded");
        AssertSameRows(source.DataSource!, target.DataSource!, """SELECT "rowid", "What" FROM "Changes" """);

        // The copy fired neither trigger; the new file's writers, plain SQL and BlockDb alike, fire both.
        await using (var db = BlockDatabase.Open(target))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(3, await session.AddBlocksetAsync([(await session.SelectXorInsertAsync(TestData.Block(3, 10))).Id]));
            await session.CommitAsync();
        }

        using var converted = new RawSql(target.DataSource!, provider);
        converted.Execute("""INSERT INTO "File" ("Path", "BlocksetID") VALUES ('/c', 3)""");
        Assert.Equal("file /a|file /b|blockset 3|file /c", converted.Text("""SELECT group_concat("What", '|') FROM (SELECT "What" FROM "Changes" ORDER BY "rowid")"""));
        Assert.Equal(10, converted.Scalar("""SELECT MAX("ID") FROM "File" """));
    }

    [Theory]
    [MemberData(nameof(ProviderNames))]
    public async Task A_foreign_table_whose_name_needs_quoting_is_carried_with_its_index_and_view(string provider)
    {
        const string table = "Odd \"name\"; DROP TABLE \"Block\"; --";
        var source = await SourceAsync("quoting.db", BlockLayout.TextHash, provider);
        using (var raw = new RawSql(source.DataSource!, provider))
        {
            raw.Execute(""""CREATE TABLE "Odd ""name""; DROP TABLE ""Block""; --" ("it's" TEXT, "a ""b""" INTEGER, [c d] BLOB)"""");
            raw.Execute(""""INSERT INTO "Odd ""name""; DROP TABLE ""Block""; --" VALUES ('x', 1, X'00FF'), ('y', 2, NULL)"""");
            raw.Execute(""""CREATE INDEX "Odd ""index""" ON "Odd ""name""; DROP TABLE ""Block""; --" ("a ""b""")"""");
            raw.Execute(""""CREATE VIEW "Odd ""view""" AS SELECT "it's" FROM "Odd ""name""; DROP TABLE ""Block""; --" WHERE "a ""b""" > 1"""");
        }

        var target = Options("quoting-target.db", BlockLayout.KeyMap, provider);
        var result = await BlockDbConverter.ConvertAsync(source, target);

        Assert.True(result.Check.IsClean, result.Check.ToString());
        Assert.Equal([table, "Odd \"index\"", "Odd \"view\""], result.CarriedObjects);
        AssertSameObjects(source.DataSource!, target.DataSource!, table, "Odd \"index\"", "Odd \"view\"");
        AssertSameRows(source.DataSource!, target.DataSource!, """"SELECT "rowid", "it's", "a ""b""", "c d" FROM "Odd ""name""; DROP TABLE ""Block""; --" """");
        using var converted = new RawSql(target.DataSource!, provider);
        Assert.Equal(2, converted.Scalar("""SELECT COUNT(*) FROM "Block" """));
        Assert.Equal("y", converted.Text(""""SELECT * FROM "Odd ""view""" """"));
    }

    [Theory]
    [MemberData(nameof(ProviderNames))]
    public async Task Every_value_keeps_its_storage_class_and_bytes_and_every_table_kind_its_keys_and_counters(string provider)
    {
        var source = await SourceAsync("values.db", BlockLayout.BlobHash, provider);
        var random = new Random(24);
        using (var raw = new RawSql(source.DataSource!, provider))
        {
            raw.Execute("""CREATE TABLE "Mixed" ("Any", "Real" REAL, "Number" NUMERIC, "Twice" INTEGER GENERATED ALWAYS AS ("Real" * 2) VIRTUAL, "Stored" TEXT GENERATED ALWAYS AS (typeof("Any")) STORED)""");
            var values = new List<string>
            {
                "NULL", "0", "-9223372036854775808", "9223372036854775807", "''", "X''", "CAST(X'FF00C328' AS TEXT)", "'é ✓'",
                $"X'{Convert.ToHexString(RandomBytes(random, 5000))}'", "1e999", "-1e999", "4.9406564584124654e-324", "1.7976931348623157e308", "0.1", "-0.0", "'12abc'",
            };
            for (var i = 0; i < 200; i++)
            {
                values.Add(BitConverter.Int64BitsToDouble(random.NextInt64()) is var d && double.IsFinite(d) ? d.ToString("R", CultureInfo.InvariantCulture) : "0.5");
            }

            foreach (var value in values)
            {
                raw.Execute($"""INSERT INTO "Mixed" ("Any", "Real", "Number") VALUES ({value}, {value}, {value})""");
            }

            raw.Execute("""DELETE FROM "Mixed" WHERE "rowid" % 7 = 3""");
            raw.Execute("""CREATE TABLE "Counted" ("ID" INTEGER PRIMARY KEY AUTOINCREMENT, "Name" TEXT)""");
            raw.Execute("""INSERT INTO "Counted" ("Name") VALUES ('a'), ('b'), ('c'), ('d')""");
            raw.Execute("""DELETE FROM "Counted" WHERE "ID" > 2""");
            raw.Execute("""CREATE TABLE "Emptied" ("ID" INTEGER PRIMARY KEY AUTOINCREMENT)""");
            raw.Execute("""INSERT INTO "Emptied" DEFAULT VALUES""");
            raw.Execute("""DELETE FROM "Emptied" """);
            raw.Execute("""CREATE TABLE "Keyed" ("A" TEXT, "B" INTEGER, "C" REAL, PRIMARY KEY ("A", "B")) WITHOUT ROWID""");
            raw.Execute("""INSERT INTO "Keyed" VALUES ('x', 2, 0.25), ('x', 1, NULL), ('a', 9, 1e-300)""");
        }

        var target = Options("values-target.db", BlockLayout.TextHash, provider);
        var result = await BlockDbConverter.ConvertAsync(source, target, new ConversionOptions { RowsPerTransaction = 50 });

        Assert.Equal(["Mixed", "Counted", "Emptied", "Keyed"], result.CarriedObjects);
        foreach (var column in new[] { "Any", "Real", "Number", "Twice", "Stored" })
        {
            AssertSameRows(source.DataSource!, target.DataSource!, $"""SELECT "rowid", typeof("{column}"), "{column}", hex("{column}") FROM "Mixed" """);
        }

        AssertSameRows(source.DataSource!, target.DataSource!, """SELECT "name", "seq" FROM "sqlite_sequence" """);
        AssertSameRows(source.DataSource!, target.DataSource!, """SELECT "A", "B", typeof("C"), "C" FROM "Keyed" """);
        using var converted = new RawSql(target.DataSource!, provider);
        converted.Execute("""INSERT INTO "Counted" ("Name") VALUES ('e')""");
        converted.Execute("""INSERT INTO "Emptied" DEFAULT VALUES""");
        Assert.Equal(5, converted.Scalar("""SELECT MAX("ID") FROM "Counted" """));
        Assert.Equal(2, converted.Scalar("""SELECT MAX("ID") FROM "Emptied" """));
        Assert.Equal("ok", converted.Text("PRAGMA integrity_check"));
    }

    /// <summary>What cannot be carried unchanged: the SQL that makes it, the layouts, the name the refusal must give.</summary>
    public static TheoryData<string, BlockLayout, BlockLayout, string, string> Refusals()
    {
        var cases = new (string Sql, BlockLayout From, BlockLayout To, string Named)[]
        {
            ("""CREATE VIRTUAL TABLE "Search" USING fts5 ("Path")""", BlockLayout.TextHash, BlockLayout.BlobHash, "Search"),
            ("""CREATE TRIGGER "BlockAdded" AFTER INSERT ON "Block" BEGIN SELECT 1; END""", BlockLayout.TextHash, BlockLayout.BlobHash, "BlockAdded"),
            ("""CREATE TABLE "Log" ("Hash"); CREATE TRIGGER "LogBlock" AFTER INSERT ON "Log" BEGIN DELETE FROM [Block] WHERE "Hash" = NEW."Hash"; END""", BlockLayout.BlobHash, BlockLayout.TextHash, "LogBlock"),
            ("""CREATE VIEW "Small" AS SELECT "Hash" FROM "main"."Block" WHERE "Size" < 10""", BlockLayout.TextHash, BlockLayout.KeyMap, "Small"),
            ("""CREATE INDEX "BlockSize" ON "Block" ("Size")""", BlockLayout.KeyMap, BlockLayout.TextHash, "BlockSize"),
            ("""CREATE TABLE "Log" ("What"); CREATE TRIGGER "Logged" AFTER INSERT ON "Log" BEGIN SELECT 1; END""", BlockLayout.TextHash, BlockLayout.KeyMap, "Logged"),
            ("""CREATE TABLE "BlockDbState" ("Key")""", BlockLayout.BlobHash, BlockLayout.KeyMap, "BlockDbState"),
            ("""ALTER TABLE "Blockset" ADD COLUMN "Compressed" INTEGER""", BlockLayout.TextHash, BlockLayout.BlobHash, "Compressed"),
            ("""CREATE TABLE "Hidden" ("rowid", "_rowid_", "OID")""", BlockLayout.BlobHash, BlockLayout.TextHash, "Hidden"),
        };
        var data = new TheoryData<string, BlockLayout, BlockLayout, string, string>();
        var providers = ProviderCatalog.SqliteNames;
        for (var i = 0; i < cases.Length; i++)
        {
            data.Add(cases[i].Sql, cases[i].From, cases[i].To, cases[i].Named, providers[i % providers.Count]);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task An_object_that_cannot_be_carried_unchanged_is_refused_by_name_and_leaves_no_file(string sql, BlockLayout from, BlockLayout to, string named, string provider)
    {
        var source = await SourceAsync("refused.db", from, provider);
        using (var raw = new RawSql(source.DataSource!, provider))
        {
            foreach (var statement in sql.Split("; CREATE", StringSplitOptions.None).Select((t, i) => i == 0 ? t : "CREATE" + t))
            {
                raw.Execute(statement);
            }
        }

        var before = await File.ReadAllBytesAsync(source.DataSource!);
        var target = Options("refused-target.db", to, provider);
        var refused = await Assert.ThrowsAsync<BlockDbConflictException>(() => BlockDbConverter.ConvertAsync(source, target));

        Assert.Contains($"'{named}'", refused.Message, StringComparison.Ordinal);
        Assert.Contains("Nothing was written", refused.Message, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(_folder.Path, "refused-target.db*"));
        Assert.Equal(before, await File.ReadAllBytesAsync(source.DataSource!));
    }

    [Theory]
    [MemberData(nameof(ProviderNames))]
    public async Task An_index_or_view_on_a_BlockDb_table_the_target_layout_defines_alike_is_carried(string provider)
    {
        var source = await SourceAsync("alike.db", BlockLayout.BlobHash, provider);
        using (var raw = new RawSql(source.DataSource!, provider))
        {
            raw.Execute("""CREATE INDEX "BlockSize" ON "Block" ("Size")""");
            raw.Execute("""CREATE VIEW "Small" AS SELECT "ID" FROM "Block" WHERE "Size" < 150""");
            raw.Execute("""CREATE UNIQUE INDEX "BlocksetLength" ON "Blockset" ("Length", "ID")""");
        }

        var target = Options("alike-target.db", BlockLayout.KeyMap, provider);
        var result = await BlockDbConverter.ConvertAsync(source, target);

        Assert.True(result.Check.IsClean, result.Check.ToString());
        Assert.Equal(["BlockSize", "BlocksetLength", "Small"], result.CarriedObjects);
        using var converted = new RawSql(target.DataSource!, provider);
        Assert.Equal(1, converted.Scalar("""SELECT "ID" FROM "Small" """));
        Assert.Equal(2, converted.Scalar("""SELECT "ID" FROM "Block" INDEXED BY "BlockSize" WHERE "Size" = 200"""));
        Assert.Equal("ok", converted.Text("PRAGMA integrity_check"));
    }

    [Fact]
    public async Task A_conversion_cancelled_while_carrying_a_table_leaves_no_file()
    {
        var source = await SourceAsync("cancel.db", BlockLayout.TextHash, "MicrosoftData");
        using (var raw = new RawSql(source.DataSource!))
        {
            raw.Execute("""CREATE TABLE "Big" ("N" INTEGER)""");
            raw.Execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO "Big" SELECT i FROM n""");
        }

        var target = Options("cancel-target.db", BlockLayout.KeyMap, "SystemData");
        using var cts = new CancellationTokenSource();
        var progress = new CancelOn("Big", cts);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => BlockDbConverter.ConvertAsync(source, target, new ConversionOptions { RowsPerTransaction = 1000 }, progress, cancellationToken: cts.Token));

        Assert.True(progress.Seen > 0);
        Assert.Empty(Directory.GetFiles(_folder.Path, "cancel-target.db*"));
    }

    public static TheoryData<string> ProviderNames() => [.. ProviderCatalog.SqliteNames];

    private static byte[] RandomBytes(Random random, int count)
    {
        var bytes = new byte[count];
        random.NextBytes(bytes);
        return bytes;
    }

    private async Task<BlockDbOptions> SourceAsync(string name, BlockLayout layout, string provider)
    {
        var source = Options(name, layout, provider);
        await using var db = BlockDatabase.Open(source);
        await using var session = await db.OpenSessionAsync();
        var volume = await session.RegisterVolumeAsync("b-1.zip", VolumeState.Uploaded);
        var a = (await session.SelectXorInsertAsync(TestData.Block(1, 100), volume)).Id;
        var b = (await session.SelectXorInsertAsync(TestData.Block(2, 200), volume)).Id;
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

    /// <summary>Cancels once a report names <paramref name="table"/> (reported synchronously, on the copying thread).</summary>
    private sealed class CancelOn(string table, CancellationTokenSource cancel) : IProgress<ConversionProgress>
    {
        public long Seen { get; private set; }

        public void Report(ConversionProgress value)
        {
            if (value.Table == table)
            {
                Seen = value.Rows;
                cancel.Cancel();
            }
        }
    }
}
