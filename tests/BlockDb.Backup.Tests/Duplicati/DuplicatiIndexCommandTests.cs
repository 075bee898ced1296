using BlockDb.Backup.Cli;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Consistency;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;

namespace BlockDb.Backup.Tests.Duplicati;

/// <summary>
/// The sample's <c>index DIRECTORY --db duplicati.sqlite</c> on a Duplicati v19 database built by Duplicati's own
/// statement replay (1 KiB blocks, SHA-256, so 32 hashes per blocklist): the file is recognised without a flag, each new
/// file's blocks, blocklist blocks and blockset are written by Duplicati's rules (the fixture's oracle and the sample's
/// <c>check</c>), a second run reuses every blockset, and what the run cannot honour is refused with nothing written.
/// </summary>
[Collection(nameof(ConsoleCapture))]
public sealed class DuplicatiIndexCommandTests : IDisposable
{
    private const int Blocksize = 1024;

    private static readonly string[] Tables = ["Operation", "Remotevolume", "Block", "Blockset", "BlocksetEntry", "BlocklistHash", "FileLookup", "FilesetEntry"];

    private readonly string _folder = Path.Combine(Path.GetTempPath(), "blockdb-backup-tests", Guid.NewGuid().ToString("N"));
    private readonly string _db;
    private readonly string _tree;
    private readonly string _data;

    public DuplicatiIndexCommandTests()
    {
        Directory.CreateDirectory(_folder);
        _db = Path.Combine(_folder, "duplicati.sqlite");
        _tree = Path.Combine(_folder, "tree");
        _data = Path.Combine(_folder, "sample-data");
        Directory.CreateDirectory(Path.Combine(_tree, "sub"));
        var random = new Random(24);
        var forty = Bytes(random, (40 * Blocksize) + 100);
        File.WriteAllBytes(Path.Combine(_tree, "forty-blocks.bin"), forty);
        File.WriteAllBytes(Path.Combine(_tree, "sub", "copy-of-forty.bin"), forty);
        File.WriteAllBytes(Path.Combine(_tree, "five-blocks.bin"), Bytes(random, 5 * Blocksize));
        File.WriteAllBytes(Path.Combine(_tree, "sub", "one-block.bin"), Bytes(random, 700));
        File.WriteAllBytes(Path.Combine(_tree, "empty.bin"), []);
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

    [Theory]
    [InlineData("MicrosoftData")]
    [InlineData("SystemData")]
    [InlineData("PInvoke")]
    public async Task Index_writes_blocks_blocklists_and_blocksets_that_Duplicatis_rules_accept(string provider)
    {
        ReplayedBackup();
        var before = Counts();
        var lastVolume = Scalar("""SELECT MAX("ID") FROM "Remotevolume" """);

        var (code, output, error) = await Sample("index", _tree, "--db", _db, "--provider", provider, "--volume-size", "16KiB", "--progress", "none");

        Assert.True(code == ExitCodes.Success, error);
        Assert.Empty(DuplicatiConsistency.CheckFile(_db));
        var after = Counts();
        // 47 KiB of new blocks in 16 KiB volumes: 3 or more new Blocks volumes, all left Temporary (no dblock file exists).
        var volumes = after["Remotevolume"] - before["Remotevolume"];
        Assert.InRange(volumes, 3, 5);
        Assert.Equal(volumes, Scalar($"""SELECT COUNT(*) FROM "Remotevolume" WHERE "ID" > {lastVolume} AND "State" = 'Temporary' AND "Type" = 'Blocks'"""));
        // Blocks 40 + 1 (the 100-byte tail), 5 and 1, the blocklists 2 + 1, and the empty file's blockset of length 0.
        Assert.Equal(4, after["Blockset"] - before["Blockset"]);
        Assert.Equal(41 + 5 + 1, after["BlocksetEntry"] - before["BlocksetEntry"]);
        Assert.Equal(2 + 1, after["BlocklistHash"] - before["BlocklistHash"]);
        Assert.Equal(41 + 5 + 1 + 2 + 1, after["Block"] - before["Block"]);
        Assert.Equal(before["Operation"], after["Operation"]);
        Assert.Equal(before["FileLookup"], after["FileLookup"]);
        Assert.Equal(before["FilesetEntry"], after["FilesetEntry"]);
        Assert.Contains("not a backup", output, StringComparison.Ordinal);
        Assert.Contains("Duplicati database", error, StringComparison.Ordinal);

        var (checkCode, checkOutput, _) = await Sample("check", "--db", _db, "--provider", provider);
        Assert.True(checkCode == ExitCodes.Success, checkOutput);
    }

    [Theory]
    [InlineData(null, @"\.dblock\.zip")]
    [InlineData("aes", @"\.dblock\.zip\.aes")]
    public async Task New_volumes_are_named_as_Duplicati_names_them_from_the_files_prefix_and_modules(string? encryption, string suffix)
    {
        DuplicatiSchema.CreateFile(_db, configuration: new DuplicatiConfiguration { Blocksize = Blocksize, Prefix = "nightly" });
        WriteConfiguration(rows =>
        {
            if (encryption is not null)
            {
                rows["encryption-module"] = encryption;
                rows["passphrase"] = "0123456789abcdef";
            }
        });

        var (code, _, error) = await Sample("index", _tree, "--db", _db, "--volume-size", "16KiB", "--progress", "none");

        Assert.True(code == ExitCodes.Success, error);
        var names = Names("""SELECT "Name" FROM "Remotevolume" ORDER BY "ID" """);
        Assert.InRange(names.Count, 3, 5);
        Assert.All(names, name => Assert.Matches("^nightly-b[0-9a-f]{32}" + suffix + "$", name));
        Assert.Equal(names.Count, names.Distinct(StringComparer.Ordinal).Count());
        Assert.Empty(DuplicatiConsistency.CheckFile(_db));
    }

    [Fact]
    public async Task A_prefix_with_a_hyphen_which_Duplicati_refuses_is_refused_with_nothing_written()
    {
        DuplicatiSchema.CreateFile(_db, configuration: new DuplicatiConfiguration { Blocksize = Blocksize, Prefix = "my-backup" });
        var before = Counts();

        var (code, _, error) = await Sample("index", _tree, "--db", _db, "--progress", "none");

        Assert.Equal(ExitCodes.Configuration, code);
        Assert.Contains("Configuration 'prefix' is 'my-backup'", error, StringComparison.Ordinal);
        Assert.Equal(before, Counts());
    }

    [Fact]
    public async Task Index_keeps_its_file_list_in_the_samples_own_folder_never_beside_the_Duplicati_database()
    {
        ReplayedBackup();
        var beside = Directory.GetFiles(_folder).Order(StringComparer.Ordinal).ToList();

        var (code, output, error) = await Sample("index", _tree, "--db", _db, "--progress", "none");

        Assert.True(code == ExitCodes.Success, error);
        Assert.Equal(beside, Directory.GetFiles(_folder).Order(StringComparer.Ordinal).ToList());
        var sidecar = Assert.Single(Directory.GetFiles(Path.Combine(_data, "duplicati")));
        Assert.Matches(@"^duplicati\.sqlite\.[0-9a-f]{16}\.files\.tsv$", Path.GetFileName(sidecar));
        Assert.Equal(1 + 5, File.ReadAllLines(sidecar).Length);
        Assert.Contains(sidecar, output, StringComparison.Ordinal);

        // Another Duplicati database of the same name, elsewhere, gets a sidecar of its own.
        var other = Path.Combine(_folder, "elsewhere", "duplicati.sqlite");
        Directory.CreateDirectory(Path.GetDirectoryName(other)!);
        File.Copy(_db, other);
        (code, _, error) = await Sample("index", _tree, "--db", other, "--progress", "none");
        Assert.True(code == ExitCodes.Success, error);
        Assert.Equal(2, Directory.GetFiles(Path.Combine(_data, "duplicati")).Length);
    }

    [Fact]
    public async Task A_second_index_reuses_every_blockset_and_writes_no_block()
    {
        ReplayedBackup();
        var (code, _, error) = await Sample("index", _tree, "--db", _db, "--progress", "none");
        Assert.True(code == ExitCodes.Success, error);
        var first = Counts();

        (code, var output, error) = await Sample("index", _tree, "--db", _db, "--progress", "none");

        Assert.True(code == ExitCodes.Success, error);
        Assert.Equal(first, Counts());
        Assert.Contains("0 new, 5 reused", output, StringComparison.Ordinal);
        Assert.Empty(DuplicatiConsistency.CheckFile(_db));
    }

    [Fact]
    public async Task Index_with_verify_reads_every_file_back_through_Duplicatis_blocksets()
    {
        ReplayedBackup();

        var (code, output, error) = await Sample("index", _tree, "--db", _db, "--verify", "--progress", "none");

        Assert.True(code == ExitCodes.Success, error + output);
        Assert.Contains("files verified", output, StringComparison.Ordinal);
        Assert.Matches(@"files verified\W+5 of 5", output);
        Assert.Matches(@"mismatches\W+0\b", output);
    }

    [Fact]
    public async Task Verify_finds_a_file_changed_after_it_was_indexed_into_a_Duplicati_database()
    {
        ReplayedBackup();
        var (code, _, error) = await Sample("index", _tree, "--db", _db, "--progress", "none");
        Assert.True(code == ExitCodes.Success, error);
        var changed = Path.Combine(_tree, "five-blocks.bin");
        var bytes = File.ReadAllBytes(changed);
        bytes[(2 * Blocksize) + 7] ^= 0xFF;
        File.WriteAllBytes(changed, bytes);

        (code, var output, _) = await Sample("verify", "--db", _db, "--progress", "none");

        Assert.NotEqual(ExitCodes.Success, code);
        Assert.Contains("five-blocks.bin", output, StringComparison.Ordinal);
        Assert.Matches(@"mismatches\W+1\b", output);
    }

    [Fact]
    public async Task A_block_size_other_than_the_files_is_refused_with_nothing_written()
    {
        ReplayedBackup();
        var before = Counts();
        var bytes = File.ReadAllBytes(_db);

        var (code, _, error) = await Sample("index", _tree, "--db", _db, "--block-size", "4KiB", "--progress", "none");

        Assert.Equal(ExitCodes.Configuration, code);
        Assert.Contains("--block-size 4,096 differs from the Duplicati database's block size 1,024 bytes", error, StringComparison.Ordinal);
        Assert.Equal(before, Counts());
        Assert.Equal(bytes, File.ReadAllBytes(_db));
        Assert.False(File.Exists(_db + ".files.tsv"), "no sidecar");
        Assert.False(Directory.Exists(_data), "no sidecar");
    }

    [Fact]
    public async Task A_file_without_an_Operation_row_gets_one_Backup_operation_and_stays_clean()
    {
        DuplicatiSchema.CreateFile(_db, configuration: new DuplicatiConfiguration { Blocksize = Blocksize });

        var (code, output, error) = await Sample("index", _tree, "--db", _db, "--block-size", "1KiB", "--progress", "none");

        Assert.True(code == ExitCodes.Success, error);
        Assert.Equal(1, Scalar("""SELECT COUNT(*) FROM "Operation" WHERE "Description" = 'Backup'"""));
        Assert.Equal(0, Scalar("""SELECT COUNT(*) FROM "Remotevolume" WHERE "OperationID" <> (SELECT "ID" FROM "Operation")"""));
        Assert.Contains("inserted by the sample", output, StringComparison.Ordinal);
        Assert.Empty(DuplicatiConsistency.CheckFile(_db));
    }

    [Fact]
    public async Task A_hash_other_than_SHA256_is_refused_with_nothing_written()
    {
        DuplicatiSchema.CreateFile(_db, configuration: new DuplicatiConfiguration { Blocksize = Blocksize, BlockHash = "SHA1" });
        var before = Counts();

        var (code, _, error) = await Sample("index", _tree, "--db", _db, "--progress", "none");

        Assert.Equal(ExitCodes.Configuration, code);
        Assert.Contains("'blockhash' is 'SHA1'", error, StringComparison.Ordinal);
        Assert.Equal(before, Counts());
    }

    [Fact]
    public async Task Fresh_on_a_Duplicati_database_is_refused_and_keeps_the_file()
    {
        ReplayedBackup();
        var before = Counts();

        var (code, _, error) = await Sample("index", _tree, "--db", _db, "--fresh", "--progress", "none");

        Assert.Equal(ExitCodes.Configuration, code);
        Assert.Contains("--fresh would delete the backup's database", error, StringComparison.Ordinal);
        Assert.Equal(before, Counts());
    }

    [Fact]
    public async Task Index_while_Duplicati_holds_the_write_lock_fails_with_the_failure_code_and_writes_nothing()
    {
        ReplayedBackup();
        var before = Counts();
        using (var duplicati = DuplicatiConnection.Open(_db))
        {
            using var transaction = duplicati.BeginTransaction(deferred: false);

            var (code, _, error) = await Sample("index", _tree, "--db", _db, "--progress", "none", "--BlockDb:Pragmas:BusyTimeout=100");

            Assert.Equal(ExitCodes.Failure, code);
            Assert.Contains("database is locked", error, StringComparison.Ordinal);
        }

        Assert.Equal(before, Counts());
    }

    private void ReplayedBackup()
    {
        var configuration = new DuplicatiConfiguration { Blocksize = Blocksize, VolumeSize = 64 * 1024 };
        var source = SyntheticBackupSource.WithFiles(new SyntheticSourceOptions { MaxFileBytes = 64 * 1024, FilesPerFolder = 16 }, configuration.Blocksize, 40);
        DuplicatiSchema.CreateFile(_db);
        DuplicatiBackupReplay.RunBackupAsync(_db, source, configuration).GetAwaiter().GetResult();
    }

    /// <summary>Runs the sample with its data folder (a Duplicati database's sidecar) under this test's folder.</summary>
    private Task<(int Code, string Output, string Error)> Sample(params string[] args) =>
        SampleCommandLine.RunAsync([.. args, $"--Backup:DataFolder={_data}"]);

    private void WriteConfiguration(Action<Dictionary<string, string>> change)
    {
        using var connection = DuplicatiConnection.Open(_db);
        using var transaction = connection.BeginTransaction();
        var rows = DuplicatiConfiguration.ReadRows(connection, transaction);
        change(rows);
        DuplicatiConfiguration.WriteRows(connection, transaction, rows);
        transaction.Commit();
    }

    private List<string> Names(string sql)
    {
        using var connection = DuplicatiConnection.Open(_db);
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        using var reader = command.ExecuteReader();
        var names = new List<string>();
        while (reader.Read())
        {
            names.Add(reader.GetString(0));
        }

        return names;
    }

    private static byte[] Bytes(Random random, int length)
    {
        var bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }

    private Dictionary<string, long> Counts() => Tables.ToDictionary(t => t, t => Scalar($"""SELECT COUNT(*) FROM "{t}" """));

    private long Scalar(string sql)
    {
        using var connection = DuplicatiConnection.Open(_db);
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        return Convert.ToInt64(command.ExecuteScalar(), System.Globalization.CultureInfo.InvariantCulture);
    }
}
