using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;
using BlockDb.Duplicati.InPlace;
using BlockDb.Opening;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// BlockDb inside Duplicati's transaction (<see cref="BlockDbBackupDatabase"/>) does the same backups, and the re-add
/// after a delete, as Duplicati's own statements: the block index it leaves is the one Duplicati leaves, row for row
/// (joined by hash, IDs aside), and Duplicati's rules find nothing. So does BlockDb on its own connection of each SQLite
/// provider beside Duplicati's, committing between the two (the adapter's standalone mode).
/// </summary>
public sealed class InPlaceReplayTests : IDisposable
{
    /// <summary>Each table of the block index as rows named by hash (never by ID), sorted.</summary>
    private static readonly string[] BlockIndexContent =
    [
        """SELECT 'Block ' || B."Hash" || ' ' || B."Size" || ' ' || V."Name" FROM "Block" B JOIN "Remotevolume" V ON V."ID" = B."VolumeID" ORDER BY 1""",
        """SELECT 'Blockset ' || "FullHash" || ' ' || "Length" FROM "Blockset" ORDER BY 1""",
        """SELECT 'BlocksetEntry ' || S."FullHash" || ' ' || S."Length" || ' ' || E."Index" || ' ' || B."Hash" || ' ' || B."Size" FROM "BlocksetEntry" E JOIN "Blockset" S ON S."ID" = E."BlocksetID" JOIN "Block" B ON B."ID" = E."BlockID" ORDER BY 1""",
        """SELECT 'BlocklistHash ' || S."FullHash" || ' ' || S."Length" || ' ' || L."Index" || ' ' || L."Hash" FROM "BlocklistHash" L JOIN "Blockset" S ON S."ID" = L."BlocksetID" ORDER BY 1""",
        """SELECT 'DeletedBlock ' || D."Hash" || ' ' || D."Size" || ' ' || V."Name" FROM "DeletedBlock" D JOIN "Remotevolume" V ON V."ID" = D."VolumeID" ORDER BY 1""",
        """SELECT 'File ' || P."Prefix" || F."Path" || ' ' || S."FullHash" || ' ' || S."Length" FROM "FileLookup" F JOIN "PathPrefix" P ON P."ID" = F."PrefixID" JOIN "Blockset" S ON S."ID" = F."BlocksetID" ORDER BY 1""",
        """SELECT 'Volume ' || "Name" || ' ' || "Type" || ' ' || "State" FROM "Remotevolume" ORDER BY 1""",
    ];

    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Providers() => ProviderCatalog.SqliteNames.Select(p => new object[] { p });

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData(BlockHashVolumeIdForm.Fresh)]
    [InlineData(BlockHashVolumeIdForm.UpgradedThrough11)]
    public async Task Backups_a_delete_and_a_readd_through_BlockDb_leave_the_block_index_Duplicati_leaves(BlockHashVolumeIdForm form)
    {
        var options = DuplicatiFiles.SmallSource with { DeleteShare = 0.2, ModifyShare = 0.2, ResurrectShare = 0.6 };
        var v0 = SyntheticBackupSource.WithFiles(options, DuplicatiFiles.SmallBlocks.Blocksize, 150);
        var (duplicati, blockdb) = await ReplayBothAsync(form, DuplicatiFiles.SmallBlocks, v0, withDelete: true);

        Assert.True(DuplicatiFiles.Scalar(blockdb, """SELECT COUNT(*) FROM "BlocklistHash" """) > 0, "no blockset of several blocks");
        AssertSameBlockIndex(duplicati, blockdb);
        await DuplicatiSessions.AssertCleanAsync(blockdb);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Backups_a_delete_and_a_readd_through_BlockDb_on_its_own_connection_leave_the_block_index_Duplicati_leaves(string provider)
    {
        var options = DuplicatiFiles.SmallSource with { DeleteShare = 0.2, ModifyShare = 0.2, ResurrectShare = 0.6 };
        var v0 = SyntheticBackupSource.WithFiles(options, DuplicatiFiles.SmallBlocks.Blocksize, 150);
        var (duplicati, blockdb) = await ReplayBothAsync(BlockHashVolumeIdForm.Fresh, DuplicatiFiles.SmallBlocks, v0, withDelete: true, provider);

        Assert.True(DuplicatiFiles.Scalar(blockdb, """SELECT COUNT(*) FROM "BlocklistHash" """) > 0, "no blockset of several blocks");
        AssertSameBlockIndex(duplicati, blockdb);
        await DuplicatiSessions.AssertCleanAsync(blockdb);
    }

    [Fact]
    public async Task Three_backups_on_Duplicatis_default_1_MiB_blocks_through_BlockDb_leave_the_block_index_Duplicati_leaves()
    {
        var configuration = new DuplicatiConfiguration();
        var v0 = SyntheticBackupSource.WithBlocks(new SyntheticSourceOptions { Seed = 7 }, configuration.Blocksize, 300);
        var (duplicati, blockdb) = await ReplayBothAsync(BlockHashVolumeIdForm.Fresh, configuration, v0, withDelete: false);

        AssertSameBlockIndex(duplicati, blockdb);
        await DuplicatiSessions.AssertCleanAsync(blockdb);
    }

    /// <summary>
    /// The same new file twice: backups v0 and v1, then (with <paramref name="withDelete"/>) Duplicati's delete of v0 and
    /// a backup v2 that brings deleted files back, else a backup v2; once with Duplicati's statements, once through
    /// BlockDb (inside Duplicati's transaction, or with <paramref name="provider"/> on its own connection of that provider).
    /// Each step is checked by Duplicati's rules on the BlockDb side.
    /// </summary>
    private async Task<(string Duplicati, string BlockDb)> ReplayBothAsync(BlockHashVolumeIdForm form, DuplicatiConfiguration configuration, SyntheticBackupSource v0, bool withDelete, string? provider = null)
    {
        var duplicati = _folder.File("duplicati.sqlite");
        var blockdb = _folder.File("blockdb.sqlite");
        DuplicatiSchema.CreateFile(duplicati, form);
        File.Copy(duplicati, blockdb);

        var v1 = v0.Next();
        foreach (var version in new[] { v0, v1 })
        {
            await DuplicatiBackupReplay.RunBackupAsync(duplicati, version, configuration);
            await using (var db = await BlockDbBackupDatabase.OpenFileAsync(blockdb, version.TimeUtc, provider))
            {
                await new DuplicatiBackupReplay(configuration).BackupAsync(db, version);
            }

            DuplicatiFiles.AssertConsistent(blockdb);
        }

        var deletedBefore = 0L;
        if (withDelete)
        {
            foreach (var path in new[] { duplicati, blockdb })
            {
                await DuplicatiBackupReplay.RunDeleteAsync(path, [v0.TimeUtc], v1.TimeUtc.AddHours(1));
            }

            deletedBefore = DuplicatiFiles.Scalar(blockdb, """SELECT COUNT(*) FROM "DeletedBlock" """);
            Assert.True(deletedBefore > 0, "the delete collected no block");
        }

        var v2 = v1.Next();
        await DuplicatiBackupReplay.RunBackupAsync(duplicati, v2, configuration);
        await using (var db = await BlockDbBackupDatabase.OpenFileAsync(blockdb, v2.TimeUtc, provider))
        {
            await new DuplicatiBackupReplay(configuration).BackupAsync(db, v2);
        }

        if (withDelete)
        {
            // The re-add took blocks back from DeletedBlock (BlockDb's take-back), as Duplicati's did on its side.
            Assert.True(DuplicatiFiles.Scalar(blockdb, """SELECT COUNT(*) FROM "DeletedBlock" """) < deletedBefore, "no block was taken back");
        }

        DuplicatiFiles.AssertConsistent(blockdb);
        return (duplicati, blockdb);
    }

    private static void AssertSameBlockIndex(string duplicati, string blockdb)
    {
        foreach (var query in BlockIndexContent)
        {
            var expected = DuplicatiFiles.Column(duplicati, query);
            Assert.True(expected.Count > 0 || query.Contains("'DeletedBlock", StringComparison.Ordinal), query);
            Assert.Equal(expected, DuplicatiFiles.Column(blockdb, query));
        }
    }
}
