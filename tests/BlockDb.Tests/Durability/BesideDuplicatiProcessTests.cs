using System.Globalization;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Opening;
using BlockDb.Tests.Duplicati;
using Xunit.Abstractions;

namespace BlockDb.Tests.Durability;

/// <summary>
/// A Duplicati-style writer process (Duplicati's own statements in its always-open deferred transaction) beside a
/// standalone BlockDb process on the same file: each finishes or fails typed with SQLITE_BUSY (code 5) and nothing
/// half-written, the committed rows of both are intact, and Duplicati's rules and BlockDb's check find nothing.
/// </summary>
public sealed class BesideDuplicatiProcessTests(ITestOutputHelper output) : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData(ProviderCatalog.PInvoke)]
    [InlineData(ProviderCatalog.MicrosoftData)]
    public async Task A_Duplicati_writer_and_a_BlockDb_process_on_one_file_finish_or_fail_busy_and_keep_each_others_committed_rows(string provider)
    {
        var path = _folder.File("beside.sqlite");
        DuplicatiSchema.CreateFile(path);
        var v0 = DuplicatiWriters.Source(5, 100);
        await DuplicatiBackupReplay.RunBackupAsync(path, v0, DuplicatiWriters.Configuration);
        var filesets = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Fileset" """);

        using var duplicati = new ChildProcess("dup-writer", path, "5", "100");
        using var blockdb = new ChildProcess("blockdb-beside", path, provider, "9");
        var duplicatiExit = await duplicati.WaitForExitAsync(TimeSpan.FromMinutes(3));
        var blockdbExit = await blockdb.WaitForExitAsync(TimeSpan.FromMinutes(3));
        foreach (var line in duplicati.Lines.Concat(blockdb.Lines).Where(l => l.StartsWith("BUSY", StringComparison.Ordinal) || l.StartsWith("stderr:", StringComparison.Ordinal) || l == "DONE").Take(40))
        {
            output.WriteLine(line);
        }

        // Each finished, or (the Duplicati writer) stopped on a typed SQLITE_BUSY with what was not committed rolled back.
        Assert.DoesNotContain(duplicati.Lines.Concat(blockdb.Lines), l => l.StartsWith("stderr:", StringComparison.Ordinal));
        Assert.True(duplicatiExit == 0 ? duplicati.Lines.Contains("DONE") : duplicatiExit == 3 && duplicati.Lines.Any(l => l.StartsWith("BUSY ", StringComparison.Ordinal)), string.Join('\n', duplicati.Lines));
        Assert.Equal(0, blockdbExit);
        Assert.Contains("DONE", blockdb.Lines);

        // Duplicati's committed rows are there: each completed backup's fileset with its entries, and a stopped one's
        // fileset with the entries it committed before the BUSY (Duplicati commits at its points during a backup).
        var backups = duplicati.Lines.Count(l => l.StartsWith("BACKUP ", StringComparison.Ordinal));
        var stopped = duplicatiExit == 3 ? 1 : 0;
        Assert.InRange(DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Fileset" WHERE "ID" IN (SELECT "FilesetID" FROM "FilesetEntry")"""), filesets + backups, filesets + backups + stopped);

        // Every blockset BlockDb acknowledged is there with its blocks, in order.
        var acks = blockdb.Lines.Where(l => l.StartsWith("ACK ", StringComparison.Ordinal)).Select(l => l.Split(' ')).ToList();
        Assert.Equal(40, acks.Count);
        foreach (var ack in acks)
        {
            var file = int.Parse(ack[1], CultureInfo.InvariantCulture);
            var expected = DuplicatiFiles.Column(path, $"""SELECT B."Hash" FROM "BlocksetEntry" E JOIN "Block" B ON B."ID" = E."BlockID" WHERE E."BlocksetID" = {ack[2]} ORDER BY E."Index" """);
            Assert.Equal(DuplicatiWriters.Blocks(9, file, expected.Count).Select(b => b.Hash.ToString()), expected);
        }

        Assert.Equal("ok", DuplicatiFiles.Column(path, "PRAGMA integrity_check").Single());
        DuplicatiFiles.AssertConsistent(path);
        await DuplicatiSessions.AssertCleanAsync(path);
    }
}
