using BlockDb.Backup.Cli;
using BlockDb.Backup.Comparison;
using BlockDb.Backup.Indexing;
using BlockDb.Backup.Lifecycle;
using BlockDb.Backup.Output;
using BlockDb.Backup.Sidecar;
using BlockDb.Backup.Verification;

namespace BlockDb.Backup.Tests;

/// <summary>
/// The sample's lifecycle on a small directory, through its command classes in process: index into volumes, delete
/// files, collect, verify the rest, list, convert. Each test has a folder of its own (tree + database).
/// </summary>
public sealed class LifecycleTests : IDisposable
{
    private const int BlockSize = 4096;
    private const long VolumeSize = 32 * 1024;

    private readonly string _folder = Path.Combine(Path.GetTempPath(), "blockdb-backup-tests", Guid.NewGuid().ToString("N"));
    private readonly string _tree;
    private readonly string _db;

    public LifecycleTests()
    {
        _tree = Path.Combine(_folder, "tree");
        _db = Path.Combine(_folder, "index.db");
        Directory.CreateDirectory(_tree);
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
    public async Task IndexDeleteHalfGcVerify_FreesExactlyTheDeletedFilesUniqueBlocks()
    {
        var random = new Random(12);
        var shared = Bytes(random, BlockSize);
        for (var i = 0; i < 24; i++)
        {
            // Sizes from under one block to several blocks; every third file starts with a block shared by all of them.
            var data = Bytes(random, 1000 + (i * 2900));
            if (i % 3 == 0)
            {
                data = [.. shared, .. data];
            }

            Write($"d{i % 3}/f{i:D2}", data);
        }

        Write("d0/empty-a", []);
        Write("d1/empty-b", []);
        Write("d2/copy-of-f05", File.ReadAllBytes(Path.Combine(_tree, "d2/f05")));

        Assert.Equal(ExitCodes.Success, await IndexAsync());
        await using var app = await OpenAsync();
        var all = FileMap.Read(FileMap.PathFor(_db));
        Assert.Equal(27, all.Count);
        Assert.Single(all.Where(e => e.Length == 0).Select(e => e.BlocksetId).Distinct());

        var volumesBefore = await VolumesAsync(app.Database);
        Assert.True(volumesBefore.Count >= 5, $"{volumesBefore.Count} volumes for about 1 MiB of new blocks in 32 KiB volumes");
        Assert.All(volumesBefore, v => Assert.Equal(VolumeState.Uploaded, v.State));
        Assert.All(volumesBefore, v => Assert.Equal(v.BlockBytes, v.Size));
        Assert.All(volumesBefore.SkipLast(1), v => Assert.InRange(v.Size!.Value, VolumeSize, VolumeSize + BlockSize - 1));

        // What the deletion should free: the blocks of the deleted files that no kept file uses.
        var (chosen, kept) = DeleteCommand.Choose(all, null, 0.5);
        Assert.Equal(all.Where((_, i) => i % 2 == 1).Select(e => e.Path), chosen.Select(e => e.Path));
        var keptBlocks = await BlocksOfAsync(app.Database, kept);
        var unique = (await BlocksOfAsync(app.Database, chosen)).Except(keptBlocks).ToHashSet();
        Assert.NotEmpty(unique);

        var deleted = await DeleteCommand.DeleteAsync(app, new DeleteSettings(null, 0.5, DryRun: false), CancellationToken.None);
        Assert.Equal(chosen.Count, deleted.Files);
        Assert.Equal(kept.Count, deleted.FilesLeft);
        Assert.Equal(kept.Select(e => e.Path), FileMap.Read(FileMap.PathFor(_db)).Select(e => e.Path));

        var wasteBefore = (await VolumesAsync(app.Database)).Sum(v => v.UnreferencedBytes);
        var gc = await GcCommand.CollectAsync(app.Database, null, CancellationToken.None);
        Assert.Equal(unique.Count, gc.Blocks);
        Assert.Equal(unique.Sum(b => b.Size), gc.Bytes);
        Assert.Equal(wasteBefore, gc.Bytes);
        Assert.Equal(gc.Blocks, gc.Volumes.Sum(v => v.CollectedBlocks));
        await using (var session = await app.Database.OpenSessionAsync())
        {
            foreach (var block in unique)
            {
                Assert.Null(await session.FindBlockAsync(block));
            }

            foreach (var block in keptBlocks)
            {
                Assert.NotNull(await session.FindBlockAsync(block));
            }
        }

        var volumesAfter = await VolumesAsync(app.Database);
        Assert.All(volumesAfter, v => Assert.Equal(0, v.UnreferencedBlocks));
        Assert.Equal(keptBlocks.Sum(b => b.Size), volumesAfter.Sum(v => v.BlockBytes));
        Assert.Equal(ExitCodes.Success, await VerifyCommand.RunAsync(Common(), new VerifySettings(null, null, null, ProgressMode.None), CancellationToken.None));
    }

    [Fact]
    public async Task DeletingAWholeFolder_LeavesItsVolumesEmpty_GcDeletesThem_AndTheOtherFilesStillVerify()
    {
        var random = new Random(7);
        for (var i = 0; i < 8; i++)
        {
            Write($"a/f{i}", Bytes(random, 3 * BlockSize));
        }

        for (var i = 0; i < 8; i++)
        {
            Write($"b/g{i}", Bytes(random, 3 * BlockSize));
        }

        Assert.Equal(ExitCodes.Success, await IndexAsync());
        await using var app = await OpenAsync();
        var deleted = await DeleteCommand.DeleteAsync(app, new DeleteSettings(Path.Combine(_tree, "a"), 1.0, DryRun: false), CancellationToken.None);
        Assert.Equal(8, deleted.Files);
        Assert.Equal(8, deleted.BlocksetsDeleted);

        var gc = await GcCommand.CollectAsync(app.Database, null, CancellationToken.None);
        Assert.Equal(24, gc.Blocks);

        // a/ is walked first and its 96 KiB of blocks fill exactly the first three 32 KiB volumes.
        var emptied = gc.Volumes.Where(v => v.DeletedNow).Select(v => v.Before.Name).ToList();
        Assert.Equal([VolumeWriter.Name(1), VolumeWriter.Name(2), VolumeWriter.Name(3)], emptied);
        var volumes = await VolumesAsync(app.Database);
        Assert.All(volumes.Where(v => emptied.Contains(v.Name)), v => Assert.Equal((VolumeState.Deleted, 0L), (v.State, v.Blocks)));
        Assert.All(volumes.Where(v => !emptied.Contains(v.Name)), v => Assert.Equal(VolumeState.Uploaded, v.State));
        Assert.Equal(ExitCodes.Success, await VerifyCommand.RunAsync(Common(), new VerifySettings(null, null, null, ProgressMode.None), CancellationToken.None));

        // A second collection finds nothing, and leaves the deleted volumes alone.
        var again = await GcCommand.CollectAsync(app.Database, null, CancellationToken.None);
        Assert.Equal(0, again.Blocks);
        Assert.DoesNotContain(again.Volumes, v => v.DeletedNow || emptied.Contains(v.Before.Name));
    }

    [Fact]
    public async Task ReindexingAnUnchangedTree_ReusesEveryBlockset_AndStartsNoVolume()
    {
        var random = new Random(3);
        for (var i = 0; i < 6; i++)
        {
            Write($"f{i}", Bytes(random, 10_000 * (i + 1)));
        }

        Write("empty", []);
        Assert.Equal(ExitCodes.Success, await IndexAsync());
        var firstSidecar = FileMap.Read(FileMap.PathFor(_db));
        BlockDbCounts counts;
        int volumeCount;
        await using (var app = await OpenAsync())
        {
            counts = await CountsAsync(app.Database);
            volumeCount = (await VolumesAsync(app.Database)).Count;
        }

        Assert.Equal(ExitCodes.Success, await IndexAsync(fresh: false));
        await using (var app = await OpenAsync())
        {
            Assert.Equal(counts, await CountsAsync(app.Database));
            Assert.Equal(volumeCount, (await VolumesAsync(app.Database)).Count);
        }

        Assert.Equal(firstSidecar, FileMap.Read(FileMap.PathFor(_db)));
        Assert.Equal(ExitCodes.Success, await VerifyCommand.RunAsync(Common(), new VerifySettings(null, null, null, ProgressMode.None), CancellationToken.None));
    }

    [Fact]
    public async Task ConvertToTextHashAndBack_KeepsEveryIdAndTheSidecar_AndComparesSame()
    {
        var random = new Random(5);
        for (var i = 0; i < 10; i++)
        {
            Write($"f{i}", Bytes(random, 7_000 * (i + 1)));
        }

        Write("empty", []);
        Assert.Equal(ExitCodes.Success, await IndexAsync());
        await using (var app = await OpenAsync())
        {
            await DeleteCommand.DeleteAsync(app, new DeleteSettings(null, 0.5, DryRun: false), CancellationToken.None);
            await GcCommand.CollectAsync(app.Database, null, CancellationToken.None);
        }

        var text = Path.Combine(_folder, "text.db");
        var back = Path.Combine(_folder, "back.db");
        await using (var app = await OpenAsync())
        {
            var (result, _) = await ConvertCommand.ConvertAsync(app, new ConvertSettings(text, BlockLayout.TextHash, false, ProgressMode.None), null, CancellationToken.None);
            Assert.Equal((BlockLayout.KeyMap, BlockLayout.TextHash, true), (result.SourceLayout, result.TargetLayout, result.Check.IsClean));
        }

        Assert.Equal(ExitCodes.Success, await ConvertCommand.RunAsync(Common(text), new ConvertSettings(back, BlockLayout.KeyMap, false, ProgressMode.None), CancellationToken.None));
        Assert.Equal(File.ReadAllText(FileMap.PathFor(_db)), File.ReadAllText(FileMap.PathFor(back)));
        Assert.Equal(ExitCodes.Success, await CompareCommand.RunAsync(Common(), [_db, text, back], CancellationToken.None));
        Assert.Equal(ExitCodes.Success, await VerifyCommand.RunAsync(Common(back), new VerifySettings(null, null, null, ProgressMode.None), CancellationToken.None));

        // A second conversion onto an existing file is a usage error before anything is written.
        await using (var app = await OpenAsync())
        {
            await Assert.ThrowsAsync<UsageException>(() => ConvertCommand.ConvertAsync(app, new ConvertSettings(back, BlockLayout.BlobHash, false, ProgressMode.None), null, CancellationToken.None));
        }
    }

    [Fact]
    public void Choose_IsDeterministicAndEven_AndHonoursThePath()
    {
        var entries = Enumerable.Range(0, 10).Select(i => new FileMapEntry(i < 4 ? $"/r/a/f{i}" : $"/r/b/f{i}", i + 1, i)).ToList();
        Assert.Equal([1, 3, 5, 7, 9], DeleteCommand.Choose(entries, null, 0.5).Chosen.Select(e => (int)e.Length));
        Assert.Equal([2, 5, 8], DeleteCommand.Choose(entries, null, 1.0 / 3).Chosen.Select(e => (int)e.Length));
        Assert.Equal([0, 1, 2, 3], DeleteCommand.Choose(entries, "/r/a", 1).Chosen.Select(e => (int)e.Length));
        Assert.Equal([1, 3], DeleteCommand.Choose(entries, "/r/a/", 0.5).Chosen.Select(e => (int)e.Length));
        Assert.Equal([4], DeleteCommand.Choose(entries, "/r/b/f4", 1).Chosen.Select(e => (int)e.Length));
        Assert.Empty(DeleteCommand.Choose(entries, "/r/c", 1).Chosen);
        Assert.Throws<UsageException>(() => DeleteCommand.Choose(entries, null, 0));
        Assert.Throws<UsageException>(() => DeleteCommand.Choose(entries, null, 1.5));
    }

    [Theory]
    [InlineData("duplicati-b000042.dblock.zip", 42L)]
    [InlineData("duplicati-b1234567.dblock.zip", 1234567L)]
    [InlineData("duplicati-bx.dblock.zip", null)]
    [InlineData("other.dblock.zip", null)]
    public void VolumeNames_RoundTrip(string name, long? number)
    {
        Assert.Equal(number, VolumeWriter.Number(name));
        if (number is { } n && n < 1_000_000)
        {
            Assert.Equal(name, VolumeWriter.Name(n));
        }
    }

    private static byte[] Bytes(Random random, int count)
    {
        var data = new byte[count];
        random.NextBytes(data);
        return data;
    }

    private static async Task<List<VolumeInfo>> VolumesAsync(IBlockDatabase database)
    {
        var volumes = new List<VolumeInfo>();
        await foreach (var v in database.EnumerateVolumesAsync())
        {
            volumes.Add(v);
        }

        return volumes;
    }

    private static async Task<BlockDbCounts> CountsAsync(IBlockDatabase database)
    {
        await using var session = await database.OpenSessionAsync();
        return await session.GetCountsAsync();
    }

    private static async Task<HashSet<BlockKey>> BlocksOfAsync(IBlockDatabase database, IEnumerable<FileMapEntry> files)
    {
        await using var session = await database.OpenSessionAsync();
        var blocks = new HashSet<BlockKey>();
        foreach (var file in files)
        {
            var listed = new BlocksetBlock[(await session.GetBlocksetAsync(file.BlocksetId)).BlockCount + 1];
            foreach (var block in listed.AsSpan(0, await session.ListBlocksetBlocksAsync(file.BlocksetId, 0, listed)))
            {
                blocks.Add(block.Block);
            }
        }

        return blocks;
    }

    private void Write(string relative, byte[] data)
    {
        var path = Path.Combine(_tree, relative);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        File.WriteAllBytes(path, data);
    }

    private CommonSettings Common(string? database = null) => new(null, "MicrosoftData", database ?? _db, false, []);

    private Task<AppServices> OpenAsync() => AppServices.CreateForExistingAsync(Common());

    private Task<int> IndexAsync(bool fresh = true) => IndexCommand.RunAsync(
        Common(),
        new IndexSettings(_tree, fresh, BlockSize, VolumeSize, null, 2, ProgressMode.None, false, null, null),
        CancellationToken.None);
}
