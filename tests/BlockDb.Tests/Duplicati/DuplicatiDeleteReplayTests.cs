using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;

namespace BlockDb.Tests.Duplicati;

/// <summary>Duplicati's delete, collection and take-back, replayed: the file stays consistent by Duplicati's rules at each step.</summary>
public sealed class DuplicatiDeleteReplayTests
{
    [Theory]
    [InlineData(null)]
    [InlineData(0L)]
    [InlineData(-1L)]
    public async Task Delete_collect_and_readd_by_Duplicatis_own_sequence_stays_consistent(long? deletedBlockCache)
    {
        using var folder = new TempFolder();
        var path = folder.File("delete.sqlite");
        var options = DuplicatiFiles.SmallSource with { DeleteShare = 0.2, ModifyShare = 0.2, ResurrectShare = 0.6 };
        var v0 = SyntheticBackupSource.WithFiles(options, DuplicatiFiles.SmallBlocks.Blocksize, 200);
        var (_, v1) = await DuplicatiFiles.CreateAsync(path, v0, versions: 2);
        DuplicatiFiles.AssertConsistent(path);

        // Delete the first version: what only it used goes, unreferenced blocks move to DeletedBlock.
        var blocksBefore = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Block" """);
        var deleted = await DuplicatiBackupReplay.RunDeleteAsync(path, [v0.TimeUtc], v1.TimeUtc.AddHours(1));
        Assert.Equal(["duplicati-20260101T020000Z.dlist.zip"], deleted);
        DuplicatiFiles.AssertConsistent(path);
        var collected = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "DeletedBlock" """);
        Assert.True(collected > 0, "the delete collected no block");
        Assert.Equal(blocksBefore - collected, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Block" """));
        Assert.Equal(["Deleted"], DuplicatiFiles.Column(path, """SELECT "State" FROM "Remotevolume" WHERE "Name" = 'duplicati-20260101T020000Z.dlist.zip'"""));
        Assert.Equal(1, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Fileset" """));

        // No block a remaining blockset names (as an entry or as a blocklist) was collected.
        Assert.Equal(0, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "BlocksetEntry" WHERE "BlockID" NOT IN (SELECT "ID" FROM "Block")"""));
        Assert.Equal(0, DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "BlocklistHash" WHERE "Hash" NOT IN (SELECT "Hash" FROM "Block")"""));

        // The next backup brings back files deleted in v1 with their old content: their blocks come back from
        // DeletedBlock with their old volume (unless the take-back cache is off: then they are new blocks).
        var v2 = v1.Next();
        await using (var db = await DuplicatiBackupStatements.OpenAsync(DuplicatiConnection.Open(path), v2.TimeUtc, ownsConnection: true, deletedBlockCache))
        {
            await new DuplicatiBackupReplay(DuplicatiFiles.SmallBlocks).BackupAsync(db, v2);
            if (deletedBlockCache < 0)
            {
                Assert.Equal(0, db.BlocksTakenBack);
            }
            else
            {
                Assert.True(db.BlocksTakenBack > 0, "no block was taken back from DeletedBlock");
            }
        }

        DuplicatiFiles.AssertConsistent(path);
        var remaining = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "DeletedBlock" """);
        Assert.True(deletedBlockCache < 0 ? remaining == collected : remaining < collected, $"{remaining} of {collected} deleted blocks remain");

        // A second delete collects again, by hash and by entry, and the file is still consistent.
        await DuplicatiBackupReplay.RunDeleteAsync(path, [v1.TimeUtc], v2.TimeUtc.AddHours(1));
        DuplicatiFiles.AssertConsistent(path);
    }
}
