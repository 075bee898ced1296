using System.Globalization;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Consistency;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;

namespace BlockDb.Tests.Duplicati;

/// <summary>Duplicati files for the tests: small blocks, so blocksets span several blocklists, and small volumes, so a backup fills many.</summary>
internal static class DuplicatiFiles
{
    /// <summary>1 KiB blocks (SHA-256: 32 hashes per blocklist), 64 KiB volumes.</summary>
    public static readonly DuplicatiConfiguration SmallBlocks = new() { Blocksize = 1024, VolumeSize = 64 * 1024 };

    /// <summary>Files up to 256 KiB (up to 8 blocklists at 1 KiB blocks), 16 to a folder, a small pool of common blocks so duplicates occur.</summary>
    public static readonly SyntheticSourceOptions SmallSource = new() { MaxFileBytes = 256 * 1024, FilesPerFolder = 16, CommonBlockPool = 50 };

    /// <summary>A new Duplicati file at <paramref name="path"/> and one replayed backup per version, starting from <paramref name="first"/>.</summary>
    /// <returns>Each backup's result and the last version backed up.</returns>
    public static async Task<(List<BackupReplayResult> Results, SyntheticBackupSource Last)> CreateAsync(string path, SyntheticBackupSource first, int versions, DuplicatiConfiguration? configuration = null, BlockHashVolumeIdForm form = BlockHashVolumeIdForm.Fresh)
    {
        configuration ??= SmallBlocks;
        DuplicatiSchema.CreateFile(path, form);
        var results = new List<BackupReplayResult>();
        var source = first;
        for (var v = 0; v < versions; v++)
        {
            if (v > 0)
            {
                source = source.Next();
            }

            results.Add(await DuplicatiBackupReplay.RunBackupAsync(path, source, configuration));
        }

        return (results, source);
    }

    /// <summary>Runs SQL on the file through a connection opened as Duplicati opens it.</summary>
    public static int Execute(string path, string sql)
    {
        using var connection = DuplicatiConnection.Open(path);
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        return command.ExecuteNonQuery();
    }

    /// <summary>The first column of the first row, as a number (0 when there is no row).</summary>
    public static long Scalar(string path, string sql)
    {
        using var connection = DuplicatiConnection.Open(path);
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        return Convert.ToInt64(command.ExecuteScalar() ?? 0L, CultureInfo.InvariantCulture);
    }

    /// <summary>The first column of every row, as text.</summary>
    public static List<string> Column(string path, string sql)
    {
        using var connection = DuplicatiConnection.Open(path);
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        using var reader = command.ExecuteReader();
        var values = new List<string>();
        while (reader.Read())
        {
            values.Add(Convert.ToString(reader.GetValue(0), CultureInfo.InvariantCulture)!);
        }

        return values;
    }

    /// <summary>Asserts the oracle finds nothing, printing what it found otherwise.</summary>
    public static void AssertConsistent(string path, DuplicatiConsistencyOptions? options = null)
    {
        var findings = DuplicatiConsistency.CheckFile(path, options);
        Assert.True(findings.Count == 0, "Duplicati's rules found:\n" + string.Join("\n", findings));
    }
}

/// <summary>One consistent Duplicati file of two replayed backups (about 300 files at 1 KiB blocks), made once per test class; each test breaks its own copy.</summary>
public sealed class DuplicatiTemplate : IDisposable
{
    private readonly TempFolder _folder = new();

    public DuplicatiTemplate()
    {
        Path = _folder.File("template.sqlite");
        var first = SyntheticBackupSource.WithFiles(DuplicatiFiles.SmallSource, DuplicatiFiles.SmallBlocks.Blocksize, 300);
        (Results, Last) = DuplicatiFiles.CreateAsync(Path, first, versions: 2).GetAwaiter().GetResult();
    }

    /// <summary>The template file (never changed by tests).</summary>
    public string Path { get; }

    /// <summary>The two backups.</summary>
    public List<BackupReplayResult> Results { get; }

    /// <summary>The last version backed up.</summary>
    public SyntheticBackupSource Last { get; }

    /// <summary>A copy of the template in <paramref name="folder"/>.</summary>
    public string CopyTo(TempFolder folder)
    {
        var copy = folder.File("copy.sqlite");
        File.Copy(Path, copy);
        return copy;
    }

    public void Dispose() => _folder.Dispose();
}
