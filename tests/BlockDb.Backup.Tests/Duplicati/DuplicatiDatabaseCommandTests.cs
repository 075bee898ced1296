using BlockDb.Backup.Cli;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;

namespace BlockDb.Backup.Tests.Duplicati;

/// <summary>
/// The sample's <c>info</c>, <c>check</c> and <c>upgrade-duplicati</c> on a Duplicati v19 database built by Duplicati's
/// own statement replay, run through the command line as a user would: what each prints and its exit code.
/// </summary>
[Collection(nameof(ConsoleCapture))]
public sealed class DuplicatiDatabaseCommandTests : IDisposable
{
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "blockdb-backup-tests", Guid.NewGuid().ToString("N"));
    private readonly string _db;

    public DuplicatiDatabaseCommandTests()
    {
        Directory.CreateDirectory(_folder);
        _db = Path.Combine(_folder, "duplicati.sqlite");
        var configuration = new DuplicatiConfiguration { Blocksize = 1024, VolumeSize = 64 * 1024 };
        var source = SyntheticBackupSource.WithFiles(new SyntheticSourceOptions { MaxFileBytes = 64 * 1024, FilesPerFolder = 16 }, configuration.Blocksize, 80);
        DuplicatiSchema.CreateFile(_db);
        DuplicatiBackupReplay.RunBackupAsync(_db, source, configuration).GetAwaiter().GetResult();
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_folder, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    [Fact]
    public async Task Info_shows_a_Duplicati_database_and_its_counts_read_through_a_read_only_session()
    {
        var (code, output) = await RunAsync("info", "--db", _db);

        Assert.Equal(ExitCodes.Success, code);
        Assert.Contains("Duplicati", output, StringComparison.Ordinal);
        Assert.Contains($"{Scalar("""SELECT COUNT(*) FROM "Block" """):N0} / {Scalar("""SELECT COUNT(*) FROM "Blockset" """):N0} / {Scalar("""SELECT COUNT(*) FROM "BlocksetEntry" """):N0}", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Check_of_a_consistent_Duplicati_database_reports_its_rules_clean_and_exits_0()
    {
        var (code, output) = await RunAsync("check", "--db", _db);

        Assert.Equal(ExitCodes.Success, code);
        Assert.Contains("Duplicati's consistency rules", output, StringComparison.Ordinal);
        Assert.Contains("clean", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Check_of_a_Duplicati_database_shows_no_key_map_rows_for_a_layout_without_a_key_map()
    {
        var (code, output) = await RunAsync("check", "--db", _db);

        Assert.Equal(ExitCodes.Success, code);
        Assert.DoesNotContain("key map", output, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("KeyMap guards", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Check_prints_Duplicatis_own_message_for_a_broken_rule_and_exits_1()
    {
        Execute("""DELETE FROM "BlocklistHash" WHERE rowid = (SELECT MIN(rowid) FROM "BlocklistHash")""");

        var (code, output) = await RunAsync("check", "--db", _db);

        Assert.Equal(ExitCodes.Difference, code);
        Assert.Contains("BlocklistHashCount: Found 1 file(s) with missing blocklist hashes", output, StringComparison.Ordinal);
        Assert.Contains("PROBLEMS FOUND", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Upgrade_duplicati_drops_the_index_keeps_the_rows_and_reverts()
    {
        var blocks = Scalar("""SELECT COUNT(*) FROM "Block" """);

        var (code, output) = await RunAsync("upgrade-duplicati", "--db", _db);
        Assert.Equal(ExitCodes.Success, code);
        Assert.Contains("BlocksetEntry_BlocksetID", output, StringComparison.Ordinal);
        Assert.Equal(0, Scalar("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'BlocksetEntry_BlocksetID'"));
        Assert.Equal(blocks, Scalar("""SELECT COUNT(*) FROM "Block" """));

        (code, output) = await RunAsync("upgrade-duplicati", "--db", _db);
        Assert.Equal(ExitCodes.Success, code);
        Assert.Contains("upgraded already", output, StringComparison.Ordinal);

        (code, _) = await RunAsync("upgrade-duplicati", "--revert", "--db", _db);
        Assert.Equal(ExitCodes.Success, code);
        Assert.Equal(1, Scalar("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'BlocksetEntry_BlocksetID'"));
    }

    [Fact]
    public async Task Upgrade_duplicati_while_Duplicati_has_the_file_open_fails_and_changes_nothing()
    {
        using (var duplicati = DuplicatiConnection.Open(_db))
        {
            using var read = duplicati.CreateCommand();
            read.CommandText = """SELECT max("Version") FROM "Version" """;
            read.ExecuteScalar();

            var (code, _) = await RunAsync("upgrade-duplicati", "--db", _db, "--BlockDb:Pragmas:BusyTimeout=100");
            Assert.Equal(ExitCodes.Failure, code);
        }

        Assert.Equal(1, Scalar("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'BlocksetEntry_BlocksetID'"));
    }

    [Fact]
    public async Task Upgrade_duplicati_of_a_BlockDb_index_is_refused_with_the_conflict_code()
    {
        var index = Path.Combine(_folder, "index.db");
        await using (BlockDatabase.Open(new BlockDbOptions { DataSource = index }))
        {
        }

        var (code, _) = await RunAsync("upgrade-duplicati", "--db", index);

        Assert.Equal(ExitCodes.Conflict, code);
    }

    private static async Task<(int Code, string Output)> RunAsync(params string[] args)
    {
        var (code, output, _) = await SampleCommandLine.RunAsync(args);
        return (code, output);
    }

    private long Scalar(string sql)
    {
        using var connection = DuplicatiConnection.Open(_db);
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        return Convert.ToInt64(command.ExecuteScalar(), System.Globalization.CultureInfo.InvariantCulture);
    }

    private void Execute(string sql)
    {
        using var connection = DuplicatiConnection.Open(_db);
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        command.ExecuteNonQuery();
    }
}
