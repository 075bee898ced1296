using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Consistency;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;
using BlockDb.Opening;
using static BlockDb.Tests.Duplicati.DuplicatiRecognitionTests;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// <see cref="DuplicatiUpgrade"/> on a replayed Duplicati file, with every SQLite provider: it drops exactly its index
/// and keeps every table and row, the file stays consistent by Duplicati's rules and recognised by BlockDb, Duplicati's
/// own backup and delete still run on it, Duplicati's query plans keep their shape, it is idempotent, its revert restores
/// the schema exactly, and every bad input is refused by type with nothing written.
/// </summary>
public sealed class DuplicatiUpgradeTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private static readonly string[] DroppedIndexes = ["BlocksetEntry_BlocksetID"];

    /// <summary>The oracle's schema rule with the index the upgrade drops allowed absent.</summary>
    internal static readonly DuplicatiConsistencyOptions Upgraded = new() { AllowMissingIndex = n => DroppedIndexes.Contains(n, StringComparer.OrdinalIgnoreCase) };

    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Providers() => ProviderCatalog.SqliteNames.Select(p => new object[] { p });

    public static IEnumerable<object[]> ProvidersAndForms() =>
        from provider in ProviderCatalog.SqliteNames
        from form in Enum.GetValues<BlockHashVolumeIdForm>()
        select new object[] { provider, form };

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(ProvidersAndForms))]
    public async Task The_upgrade_drops_only_its_index_and_keeps_every_table_column_and_row(string provider, BlockHashVolumeIdForm form)
    {
        var path = await ReplayedFileAsync(form);
        var (contents, schema) = (TableContents(path), Schema(path));

        Assert.Equal(DroppedIndexes, await DuplicatiUpgrade.ApplyAsync(Options(provider, path)));

        Assert.Equal(contents, TableContents(path));
        Assert.Equal(schema.Where(o => !DroppedIndexes.Any(n => o.StartsWith($"index|{n}|", StringComparison.Ordinal))), Schema(path));
        Assert.Equal(schema.Count - DroppedIndexes.Length, Schema(path).Count);
        Assert.Equal(19, DuplicatiFiles.Scalar(path, """SELECT max("Version") FROM "Version" """));
        AssertNothingBeside(path);
        DuplicatiFiles.AssertConsistent(path, Upgraded);
        await using var db = Open(provider, path);
        Assert.Equal(BlockLayout.Duplicati, db.Layout);
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task The_upgrade_run_again_changes_nothing(string provider)
    {
        var path = template.CopyTo(_folder);
        await DuplicatiUpgrade.ApplyAsync(Options(provider, path));
        var (contents, schema) = (TableContents(path), Schema(path));

        Assert.Empty(await DuplicatiUpgrade.ApplyAsync(Options(provider, path)));

        Assert.Equal(contents, TableContents(path));
        Assert.Equal(schema, Schema(path));
    }

    [Theory]
    [MemberData(nameof(ProvidersAndForms))]
    public async Task The_revert_restores_the_schema_exactly_and_keeps_every_row(string provider, BlockHashVolumeIdForm form)
    {
        var path = await ReplayedFileAsync(form);
        var (contents, schema) = (TableContents(path), Schema(path));
        await DuplicatiUpgrade.ApplyAsync(Options(provider, path));

        Assert.Equal(DroppedIndexes, await DuplicatiUpgrade.RevertAsync(Options(provider, path)));
        Assert.Empty(await DuplicatiUpgrade.RevertAsync(Options(provider, path)));

        Assert.Equal(schema, Schema(path));
        Assert.Equal(contents, TableContents(path));
        DuplicatiFiles.AssertConsistent(path);
    }

    [Fact]
    public void The_statements_Duplicati_would_run_itself_upgrade_and_revert_in_its_own_transaction()
    {
        var path = template.CopyTo(_folder);
        var (contents, schema) = (TableContents(path), Schema(path));

        DuplicatiConnection.RunInTransaction(path, DuplicatiUpgrade.Statements);
        DuplicatiConnection.RunInTransaction(path, DuplicatiUpgrade.Statements);
        Assert.Equal(schema.Count - DroppedIndexes.Length, Schema(path).Count);
        DuplicatiFiles.AssertConsistent(path, Upgraded);

        DuplicatiConnection.RunInTransaction(path, DuplicatiUpgrade.RevertStatements);
        DuplicatiConnection.RunInTransaction(path, DuplicatiUpgrade.RevertStatements);
        Assert.Equal(schema, Schema(path));
        Assert.Equal(contents, TableContents(path));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Duplicatis_own_backup_and_delete_run_on_the_upgraded_file_and_keep_it_consistent(string provider)
    {
        var path = template.CopyTo(_folder);
        await DuplicatiUpgrade.ApplyAsync(Options(provider, path));

        var next = template.Last.Next();
        var run = await DuplicatiBackupReplay.RunBackupAsync(path, next, DuplicatiFiles.SmallBlocks);
        Assert.True(run.NewBlocks > 0, "the backup added no block");
        DuplicatiFiles.AssertConsistent(path, Upgraded);

        var first = template.Results[0].FilesetTimeUtc;
        var deleted = await DuplicatiBackupReplay.RunDeleteAsync(path, [first], next.TimeUtc.AddHours(1));
        Assert.NotEmpty(deleted);
        Assert.True(DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "DeletedBlock" """) > 0, "the delete collected no block");
        DuplicatiFiles.AssertConsistent(path, Upgraded);

        await using var db = Open(provider, path);
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
    }

    /// <summary>
    /// Duplicati's statements whose plan used <c>BlocksetEntry_BlocksetID</c> (SQLite 3.50.4, no statistics), and the one
    /// that made <c>BlockHashVolumeID</c> stay (LocalRecreateDatabase.cs 1104), each as Duplicati writes it with its
    /// parameters given values (duplicati/duplicati at 66cfb242, file and line given).
    /// </summary>
    public static TheoryData<string, string> DuplicatiQueries() => new()
    {
        { "LocalDatabase.cs 1939 (VerifyConsistency)", """SELECT COUNT(*) FROM "Blockset" WHERE "Length" > 0 AND "ID" NOT IN (SELECT "BlocksetId" FROM "BlocksetEntry")""" },
        { "LocalDatabase.cs 3352", """SELECT "Blockset"."ID" FROM "BlocksetEntry", "Blockset", "Metadataset", "Block" WHERE "Metadataset"."BlocksetID" = "Blockset"."ID" AND "BlocksetEntry"."BlocksetID" = "Blockset"."ID" AND "Block"."ID" = "BlocksetEntry"."BlockID" AND "Block"."VolumeID" NOT IN (1) AND "Blockset"."Length" > 0 ORDER BY "Blockset"."ID" """ },
        { "LocalDeleteDatabase.cs 192", """DELETE FROM "BlocksetEntry" WHERE "BlocksetID" NOT IN (SELECT DISTINCT "ID" FROM "Blockset")""" },
        { "LocalRecreateDatabase.cs 1143", """SELECT "BlocklistHash"."Hash" FROM "BlocklistHash" LEFT OUTER JOIN "BlocksetEntry" ON "BlocksetEntry"."Index" = ("BlocklistHash"."Index" * 32) AND "BlocksetEntry"."BlocksetID" = "BlocklistHash"."BlocksetID" WHERE "BlocksetEntry"."BlocksetID" IS NULL""" },
        { "LocalRestoreDatabase.cs 2615", """SELECT "Block"."ID", "Block"."Hash", "Block"."Size", "Block"."VolumeID" FROM "File" INNER JOIN "Metadataset" ON "File"."MetadataID" = "Metadataset"."ID" INNER JOIN "BlocksetEntry" ON "Metadataset"."BlocksetID" = "BlocksetEntry"."BlocksetID" INNER JOIN "Block" ON "BlocksetEntry"."BlockID" = "Block"."ID" WHERE "File"."ID" = 1""" },
        { "LocalRecreateDatabase.cs 1104", """SELECT DISTINCT "BlocklistHash"."Hash" FROM "BlocklistHash", "Block" WHERE "Block"."Hash" = "BlocklistHash"."Hash" AND "Block"."VolumeID" = 1""" },
        { "LocalBackupDatabase.cs 1863", """SELECT DISTINCT "Block"."Hash" FROM "Block" WHERE "Block"."VolumeID" = 1 AND "Block"."Hash" IN (SELECT "Hash" FROM "BlocklistHash")""" },
        { "LocalDeleteDatabase.cs 211", """SELECT "Hash", "Size", "VolumeID" FROM "Block" WHERE "ID" NOT IN (SELECT DISTINCT "BlockID" AS "BlockID" FROM "BlocksetEntry" UNION SELECT DISTINCT "ID" FROM "Block", "BlocklistHash" WHERE "Block"."Hash" = "BlocklistHash"."Hash")""" },
    };

    /// <summary>
    /// The plan keeps its shape: the same tables in the same loop order, the same searches and scans, where a use of the
    /// dropped index becomes a use of the primary key (BlocksetID, Index) of the WITHOUT ROWID table or of the covering
    /// <c>nnc_BlocksetEntry</c>, both of which hold the same keys in the same order.
    /// </summary>
    [Theory]
    [MemberData(nameof(DuplicatiQueries))]
    public async Task Duplicatis_query_plans_keep_their_shape_on_the_upgraded_file(string where, string sql)
    {
        var path = template.CopyTo(_folder);
        var before = Plan(path, sql);
        await DuplicatiUpgrade.ApplyAsync(Options(ProviderCatalog.SqliteNames[0], path));
        var after = Plan(path, sql);

        Assert.True(
            before.Select(Shape).SequenceEqual(after.Select(Shape)),
            $"{where}: the plan changed shape.\nbefore:\n{string.Join("\n", before)}\nafter:\n{string.Join("\n", after)}");
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Bad_inputs_are_refused_by_type_and_write_nothing(string provider)
    {
        await Assert.ThrowsAsync<ArgumentNullException>(() => DuplicatiUpgrade.ApplyAsync(null!));

        var missing = _folder.File("missing.sqlite");
        await Assert.ThrowsAsync<BlockDbConfigurationException>(() => DuplicatiUpgrade.ApplyAsync(Options(provider, missing)));
        Assert.False(File.Exists(missing));

        var empty = _folder.File("empty.sqlite");
        File.WriteAllBytes(empty, []);
        await Assert.ThrowsAsync<BlockDbFormatException>(() => DuplicatiUpgrade.ApplyAsync(Options(provider, empty)));
        Assert.Equal(0, new FileInfo(empty).Length);

        var blockDb = _folder.File("blockdb.sqlite");
        await using (BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = blockDb }))
        {
        }

        var blockDbBytes = FileHash(blockDb);
        var conflict = await Assert.ThrowsAsync<BlockDbConflictException>(() => DuplicatiUpgrade.RevertAsync(Options(provider, blockDb)));
        Assert.Contains("not a Duplicati local database", conflict.Message, StringComparison.Ordinal);
        Assert.Equal(blockDbBytes, FileHash(blockDb));

        var older = _folder.File("v18.sqlite");
        DuplicatiBadFiles.CreateWithVersion(older, 18);
        var olderBytes = FileHash(older);
        var version = await Assert.ThrowsAsync<DuplicatiSchemaVersionException>(() => DuplicatiUpgrade.ApplyAsync(Options(provider, older)));
        Assert.Equal(18, version.FoundVersion);
        Assert.Equal(olderBytes, FileHash(older));

        var path = template.CopyTo(_folder);
        var bytes = FileHash(path);
        var options = Options(provider, path);
        options.ReadOnly = true;
        await Assert.ThrowsAsync<BlockDbReadOnlyException>(() => DuplicatiUpgrade.ApplyAsync(options));
        Assert.Equal(bytes, FileHash(path));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_file_Duplicati_has_open_is_refused_with_SQLITE_BUSY_and_left_unchanged(string provider)
    {
        var path = template.CopyTo(_folder);
        var schema = Schema(path);

        // Duplicati's backup: its connection, its always-open transaction, one write not yet committed.
        await using (var duplicati = await DuplicatiBackupStatements.OpenAsync(DuplicatiConnection.Open(path), template.Last.Next().TimeUtc, ownsConnection: true))
        {
            await duplicati.LogRemoteOperationAsync("put", "x", null, CancellationToken.None);
            var busy = await Assert.ThrowsAsync<BlockDbException>(() => DuplicatiUpgrade.ApplyAsync(Options(provider, path)));
            Assert.Equal(SqliteResultCode.Busy, busy.SqliteErrorCode);
            Assert.Contains("another connection has", busy.Message, StringComparison.Ordinal);
        }

        // Only open and idle, after reading its Version table as Duplicati does at open.
        using (var idle = DuplicatiConnection.Open(path))
        {
            using var read = idle.CreateCommand();
            read.CommandText = """SELECT max("Version") FROM "Version" """;
            read.ExecuteScalar();
            var busy = await Assert.ThrowsAsync<BlockDbException>(() => DuplicatiUpgrade.ApplyAsync(Options(provider, path)));
            Assert.Equal(SqliteResultCode.Busy, busy.SqliteErrorCode);
        }

        Assert.Equal(schema, Schema(path));
        Assert.Equal(DroppedIndexes, await DuplicatiUpgrade.ApplyAsync(Options(provider, path)));
    }

    private static BlockDbOptions Options(string provider, string path) =>
        new() { Provider = provider, DataSource = path, Pragmas = { BusyTimeout = 200 } };

    private async Task<string> ReplayedFileAsync(BlockHashVolumeIdForm form)
    {
        if (form == BlockHashVolumeIdForm.Fresh)
        {
            return template.CopyTo(_folder);
        }

        var path = _folder.File($"{form}.sqlite");
        await DuplicatiFiles.CreateAsync(path, SmallFirst(), versions: 2, form: form);
        return path;
    }

    private static SyntheticBackupSource SmallFirst() =>
        SyntheticBackupSource.WithFiles(DuplicatiFiles.SmallSource, DuplicatiFiles.SmallBlocks.Blocksize, 100);

    /// <summary>Each table's name and a SHA-256 of all its rows, every column, in a total order.</summary>
    internal static List<string> TableContents(string path)
    {
        using var connection = DuplicatiConnection.Open(path);
        var tables = new List<string>();
        using (var list = connection.CreateCommand())
        {
            list.CommandText = "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name";
            using var reader = list.ExecuteReader();
            while (reader.Read())
            {
                tables.Add(reader.GetString(0));
            }
        }

        var result = new List<string>();
        foreach (var table in tables)
        {
            using var command = connection.CreateCommand();
            command.CommandText = $"SELECT * FROM \"{table}\"";
            using var probe = command.ExecuteReader();
            var columns = probe.FieldCount;
            probe.Close();
            command.CommandText = $"SELECT * FROM \"{table}\" ORDER BY {string.Join(", ", Enumerable.Range(1, columns))}";
            using var reader = command.ExecuteReader();
            using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            var rows = 0;
            while (reader.Read())
            {
                rows++;
                for (var i = 0; i < columns; i++)
                {
                    var value = reader.IsDBNull(i) ? "\0null" : Convert.ToString(reader.GetValue(i), CultureInfo.InvariantCulture) + "|" + reader.GetDataTypeName(i);
                    hash.AppendData(Encoding.UTF8.GetBytes(value + "\u001f"));
                }
            }

            result.Add(string.Create(CultureInfo.InvariantCulture, $"{table}: {rows} rows, {Convert.ToHexString(hash.GetHashAndReset())}"));
        }

        return result;
    }

    private static List<string> Plan(string path, string sql)
    {
        using var connection = DuplicatiConnection.Open(path);
        using var transaction = connection.BeginTransaction();
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = "EXPLAIN QUERY PLAN " + sql;
        using var reader = command.ExecuteReader();
        var lines = new List<string>();
        while (reader.Read())
        {
            lines.Add(reader.GetString(3));
        }

        return lines;
    }

    /// <summary>A plan line with every way of reading BlocksetEntry by its (BlocksetID, Index) order written the same.</summary>
    private static string Shape(string line) =>
        System.Text.RegularExpressions.Regex.Replace(
            line,
            @"^(SCAN|SEARCH) (BlocksetEntry|bse)( USING (COVERING INDEX BlocksetEntry_BlocksetID|INDEX BlocksetEntry_BlocksetID|PRIMARY KEY|COVERING INDEX nnc_BlocksetEntry))?",
            "$1 $2 <by BlocksetID>")
        .Replace("USING INDEX BlocksetEntry_BlocksetID FOR IN-OPERATOR", "USING <by BlocksetID> FOR IN-OPERATOR", StringComparison.Ordinal)
        .Replace("USING INDEX sqlite_autoindex_BlocksetEntry_1 FOR IN-OPERATOR", "USING <by BlocksetID> FOR IN-OPERATOR", StringComparison.Ordinal);
}
