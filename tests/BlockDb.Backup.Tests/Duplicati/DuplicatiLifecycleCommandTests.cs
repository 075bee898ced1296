using BlockDb.Backup.Cli;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Consistency;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;

namespace BlockDb.Backup.Tests.Duplicati;

/// <summary>
/// The sample's <c>index</c>, <c>delete</c> and <c>gc</c> in a row on a Duplicati v19 database built by Duplicati's own
/// statement replay: after each, Duplicati's consistency rules (the fixture's oracle) find nothing; what is Duplicati's
/// (a blockset its files name, its volumes' states) is left to Duplicati.
/// </summary>
[Collection(nameof(ConsoleCapture))]
public sealed class DuplicatiLifecycleCommandTests : IDisposable
{
    private const int Blocksize = 1024;

    private readonly string _folder = Path.Combine(Path.GetTempPath(), "blockdb-backup-tests", Guid.NewGuid().ToString("N"));
    private readonly string _db;
    private readonly string _tree;
    private readonly string _data;
    private readonly DuplicatiConfiguration _configuration = new() { Blocksize = Blocksize, VolumeSize = 64 * 1024 };

    public DuplicatiLifecycleCommandTests()
    {
        Directory.CreateDirectory(_folder);
        _db = Path.Combine(_folder, "duplicati.sqlite");
        _data = Path.Combine(_folder, "sample-data");
        _tree = Path.Combine(_folder, "tree");
        Directory.CreateDirectory(_tree);
        var random = new Random(7);
        File.WriteAllBytes(Path.Combine(_tree, "forty-blocks.bin"), Bytes(random, (40 * Blocksize) + 100));
        File.WriteAllBytes(Path.Combine(_tree, "five-blocks.bin"), Bytes(random, 5 * Blocksize));
        File.WriteAllBytes(Path.Combine(_tree, "one-block.bin"), Bytes(random, 700));
        // Its content (nothing) is a blockset Duplicati's own empty files name already.
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
    public async Task Index_delete_and_gc_leave_the_Duplicati_database_consistent_by_Duplicatis_rules(string provider)
    {
        var source = SyntheticBackupSource.WithFiles(new SyntheticSourceOptions { MaxFileBytes = 64 * 1024, FilesPerFolder = 16, EmptyFileShare = 0.3 }, Blocksize, 40);
        DuplicatiSchema.CreateFile(_db);
        await DuplicatiBackupReplay.RunBackupAsync(_db, source, _configuration);
        var emptyBlocksetNamed = Scalar("""SELECT COUNT(*) FROM "FileLookup" L JOIN "Blockset" S ON S."ID" = L."BlocksetID" WHERE S."Length" = 0""");
        Assert.True(emptyBlocksetNamed > 0, "the replayed backup has an empty file");
        var blocks = Scalar("""SELECT COUNT(*) FROM "Block" """);
        var blocksets = Scalar("""SELECT COUNT(*) FROM "Blockset" """);
        var duplicatisVolumes = VolumeStates();

        var (code, _, error) = await Sample("index", _tree, "--db", _db, "--provider", provider, "--progress", "none");
        Assert.True(code == ExitCodes.Success, error);
        Assert.Empty(DuplicatiConsistency.CheckFile(_db));
        Assert.Equal(blocksets + 3, Scalar("""SELECT COUNT(*) FROM "Blockset" """));
        var added = Scalar("""SELECT COUNT(*) FROM "Block" """) - blocks;
        // Blocks 40 + 1 (the 100-byte tail), 5 and 1, and the blocklists 2 + 1.
        Assert.Equal(41 + 5 + 1 + 2 + 1, added);

        (code, var output, error) = await Sample("delete", "--db", _db, "--provider", provider, "--fraction", "1");
        Assert.True(code == ExitCodes.Success, error + output);
        Assert.Matches(@"blocksets deleted\W+3\b", output);
        Assert.Matches(@"named by Duplicati's files or metadata\W+1\b", output);
        Assert.Empty(DuplicatiConsistency.CheckFile(_db));
        Assert.Equal(blocksets, Scalar("""SELECT COUNT(*) FROM "Blockset" """));

        (code, output, error) = await Sample("gc", "--db", _db, "--provider", provider);
        Assert.True(code == ExitCodes.Success, error + output);
        Assert.Empty(DuplicatiConsistency.CheckFile(_db));
        Assert.Equal(blocks, Scalar("""SELECT COUNT(*) FROM "Block" """));
        Assert.Equal(added, Scalar("""SELECT COUNT(*) FROM "DeletedBlock" """));
        Assert.Equal(duplicatisVolumes, VolumeStates().Where(v => duplicatisVolumes.ContainsKey(v.Key)).ToDictionary());

        (code, output, _) = await Sample("check", "--db", _db, "--provider", provider);
        Assert.True(code == ExitCodes.Success, output);
    }

    [Fact]
    public async Task Gc_leaves_the_volumes_Duplicatis_own_delete_emptied_to_Duplicatis_compact()
    {
        // Every file changes in the second version, so deleting the first leaves volumes that hold only its blocks empty.
        var v0 = SyntheticBackupSource.WithFiles(
            new SyntheticSourceOptions { MaxFileBytes = 64 * 1024, FilesPerFolder = 16, EmptyFileShare = 0, CommonBlockShare = 0, DuplicateFileShare = 0, ModifyShare = 1, TouchShare = 0, DeleteShare = 0 },
            Blocksize,
            40);
        DuplicatiSchema.CreateFile(_db);
        await DuplicatiBackupReplay.RunBackupAsync(_db, v0, _configuration);
        var v1 = v0.Next();
        await DuplicatiBackupReplay.RunBackupAsync(_db, v1, _configuration);
        await DuplicatiBackupReplay.RunDeleteAsync(_db, [v0.TimeUtc], v1.TimeUtc.AddHours(1));
        Assert.Empty(DuplicatiConsistency.CheckFile(_db));
        var empty = Scalar("""SELECT COUNT(*) FROM "Remotevolume" V WHERE V."Type" = 'Blocks' AND V."State" IN ('Uploaded', 'Verified') AND NOT EXISTS (SELECT 1 FROM "Block" B WHERE B."VolumeID" = V."ID")""");
        Assert.True(empty > 0, "Duplicati's delete left no Blocks volume empty");
        var states = VolumeStates();

        var (code, output, error) = await Sample("gc", "--db", _db);

        Assert.True(code == ExitCodes.Success, error + output);
        Assert.Equal(states, VolumeStates());
        Assert.Contains($"{empty} Uploaded or Verified volumes hold no block, for Duplicati's compact", output, StringComparison.Ordinal);
        Assert.Empty(DuplicatiConsistency.CheckFile(_db));
    }

    /// <summary>Runs the sample with its data folder (a Duplicati database's sidecar) under this test's folder.</summary>
    private Task<(int Code, string Output, string Error)> Sample(params string[] args) =>
        SampleCommandLine.RunAsync([.. args, $"--Backup:DataFolder={_data}"]);

    private Dictionary<long, string> VolumeStates()
    {
        using var connection = DuplicatiConnection.Open(_db);
        using var command = connection.CreateCommand();
        command.CommandText = """SELECT "ID", "State" FROM "Remotevolume" """;
        using var reader = command.ExecuteReader();
        var states = new Dictionary<long, string>();
        while (reader.Read())
        {
            states[reader.GetInt64(0)] = reader.GetString(1);
        }

        return states;
    }

    private long Scalar(string sql)
    {
        using var connection = DuplicatiConnection.Open(_db);
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        return Convert.ToInt64(command.ExecuteScalar(), System.Globalization.CultureInfo.InvariantCulture);
    }

    private static byte[] Bytes(Random random, int length)
    {
        var bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }
}
