using BlockDb.KeyMap;

namespace BlockDb.Tests.KeyMap;

/// <summary>
/// Adversarial cases for the persisted key map: file permissions (the snapshot holds the secret key seed), a long
/// reader in DELETE mode at dispose, a copy of the database with its snapshot that diverges from the original, and
/// foreign SQL on the snapshot's settings. Each ends by finding every block of the file through a reopened map.
/// </summary>
public sealed class KeyMapSnapshotHostileTests : IDisposable
{
    private const int Blocks = 2000;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    private static long SizeOf(int i) => 1000 + (i % 7);

    private static IBlockDatabase Open(string path, CapturingLoggerFactory? log = null, Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = "PInvoke", DataSource = path, Index = { Layout = BlockLayout.KeyMap }, Pragmas = { BusyTimeout = 5000 } };
        configure?.Invoke(options);
        return new BlockDatabaseBuilder(options).UseLoggerFactory(log ?? new CapturingLoggerFactory()).Build();
    }

    private static async Task<CapturingLoggerFactory> Write(string path, int from, int to, Action<BlockDbOptions>? configure = null)
    {
        var log = new CapturingLoggerFactory();
        await using (var db = Open(path, log, configure))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = from; i < to; i++)
            {
                await session.SelectXorInsertAsync(TestData.Block(i, SizeOf(i)));
            }
        }

        return log;
    }

    private static async Task<(string Source, string? Refused)> FirstLookup(string path, Action<BlockDbOptions>? configure = null)
    {
        var log = new CapturingLoggerFactory();
        await using (var db = Open(path, log, configure))
        await using (var session = await db.OpenSessionAsync())
        {
            await session.FindBlockAsync(TestData.Block(0, SizeOf(0)));
        }

        var loaded = Assert.Single(log.Messages, m => m.Id == 10);
        var refused = log.Messages.Where(m => m.Id == 12).Select(m => m.Text).SingleOrDefault();
        return (loaded.Text.Contains("from snapshot", StringComparison.Ordinal) ? "snapshot" : "scan", refused);
    }

    private static async Task AssertEveryBlockFound(string path, int newBlocksFrom, Action<BlockDbOptions>? configure = null)
    {
        List<(long Id, string Hash, long Size)> rows;
        using (var raw = new RawSql(path))
        {
            rows = raw.Blocks();
        }

        await using (var db = Open(path, configure: configure))
        await using (var session = await db.OpenSessionAsync())
        {
            foreach (var (id, hash, size) in rows)
            {
                Assert.Equal(new SelectXorInsertResult(id, false), await session.SelectXorInsertAsync(BlockKey.Parse(hash, size)));
            }

            for (var i = newBlocksFrom; i < newBlocksFrom + 20; i++)
            {
                Assert.True((await session.SelectXorInsertAsync(TestData.Block(i, SizeOf(i)))).Created);
            }

            await session.CommitAsync();
        }

        using var after = new RawSql(path);
        Assert.Equal(0, after.DuplicateGroups());
    }

    /// <summary>
    /// The snapshot holds the file's secret key seed (and every block's key), so it must be no easier to read than the
    /// database itself: SQLite gives its journal and WAL the database's permissions, and so must the snapshot.
    /// </summary>
    [Fact]
    public async Task The_snapshot_is_no_more_readable_than_the_database_that_holds_its_seed()
    {
        if (OperatingSystem.IsWindows())
        {
            return;
        }

        var path = _folder.File("private.db");
        await Write(path, 0, 100);
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite); // 0600: only the owner reads the index
        await Write(path, 100, 200);

        var snapshot = KeyMapFileFormat.PathOf(path);
        Assert.True(File.Exists(snapshot));
        var extra = File.GetUnixFileMode(snapshot) & ~File.GetUnixFileMode(path);
        Assert.Equal(UnixFileMode.None, extra);
        Assert.Equal(("snapshot", null), await FirstLookup(path));
        await AssertEveryBlockFound(path, 100_000);
    }

    /// <summary>In DELETE mode a reader holding its shared lock through the dispose stops the token's COMMIT: the dispose still returns, and nothing is missed.</summary>
    [Fact]
    public async Task A_long_reader_in_DELETE_mode_at_dispose_neither_fails_nor_hangs_the_dispose()
    {
        var path = _folder.File("delete.db");
        void Delete(BlockDbOptions o) => o.Pragmas.JournalMode = JournalMode.Delete;
        await Write(path, 0, Blocks, Delete);

        var log = new CapturingLoggerFactory();
        using (var reader = new RawSql(path))
        {
            await using (var db = Open(path, log, Delete))
            {
                await using (var session = await db.OpenSessionAsync())
                {
                    for (var i = Blocks; i < Blocks + 100; i++)
                    {
                        await session.SelectXorInsertAsync(TestData.Block(i, SizeOf(i)));
                    }
                }

                reader.Execute("BEGIN");
                Assert.True(reader.Scalar("""SELECT COUNT(*) FROM "Block" """) > 0); // holds SHARED until the end of the dispose
            }

            reader.Execute("COMMIT");
        }

        // The token's COMMIT could not take the lock: no new snapshot, so the file still names the old one's token and
        // that one (W below the 100 new rows) is used and caught up.
        Assert.Equal(0, log.Count(13, "KeyMapSnapshotWritten"));
        Assert.Equal(("snapshot", null), await FirstLookup(path, Delete));
        await AssertEveryBlockFound(path, 100_000, Delete);
    }

    /// <summary>
    /// A copy of the database taken with its snapshot, then both grow apart: the original's newer snapshot copied
    /// beside the copy is refused (its token), the copy's own older one still serves it.
    /// </summary>
    [Fact]
    public async Task A_copy_that_grew_apart_from_the_original_refuses_the_originals_newer_snapshot()
    {
        var a = _folder.File("a.db");
        var b = _folder.File("b.db");
        await Write(a, 0, Blocks);
        File.Copy(a, b);
        File.Copy(KeyMapFileFormat.PathOf(a), KeyMapFileFormat.PathOf(b));

        await Write(a, Blocks, Blocks + 300); // a: new token and snapshot
        await Write(b, 50_000, 50_300);       // b: other blocks at the same IDs
        File.Copy(KeyMapFileFormat.PathOf(a), KeyMapFileFormat.PathOf(b), overwrite: true);

        var (source, refused) = await FirstLookup(b);
        Assert.Equal("scan", source);
        Assert.Contains("token", refused, StringComparison.Ordinal);
        await AssertEveryBlockFound(b, 100_000);
        await AssertEveryBlockFound(a, 100_000);
    }

    /// <summary>Foreign SQL that changes the recorded seed (or removes the snapshot's settings) makes the snapshot refused, never used with the wrong keys.</summary>
    [Theory]
    [InlineData("""UPDATE "BlockDbSettings" SET "Value" = '12345' WHERE "Name" = 'KeyMapSeed'""")]
    [InlineData("""UPDATE "BlockDbSettings" SET "Value" = 'garbage' WHERE "Name" = 'KeyMapSeed'""")]
    [InlineData("""DELETE FROM "BlockDbSettings" WHERE "Name" IN ('KeyMapSeed', 'KeyMapSnapshotToken')""")]
    [InlineData("""DELETE FROM "BlockDbSettings" WHERE "Name" = 'FileId'""")]
    public async Task Foreign_SQL_on_the_snapshots_settings_never_makes_a_snapshot_be_used_with_other_keys(string sql)
    {
        var path = _folder.File("settings.db");
        await Write(path, 0, Blocks);
        using (var raw = new RawSql(path))
        {
            raw.Execute(sql);
        }

        Assert.Equal("scan", (await FirstLookup(path)).Source);
        await AssertEveryBlockFound(path, 100_000);
        await Write(path, 200_000, 200_010); // the next dispose writes again
        await AssertEveryBlockFound(path, 300_000);
    }

    /// <summary>
    /// Collecting every block (the anchor among them) leaves the map only stale entries; the snapshot then written has
    /// no anchor. Blocks added again get new IDs and are found, never the collected IDs.
    /// </summary>
    [Fact]
    public async Task Collecting_every_block_then_adding_them_again_finds_each_at_its_new_ID()
    {
        var path = _folder.File("collected.db");
        await Write(path, 0, Blocks);
        await using (var db = Open(path))
        await using (var session = await db.OpenSessionAsync())
        {
            var collected = await session.DeleteUnreferencedBlocksAsync();
            await session.CommitAsync();
        }

        using (var raw = new RawSql(path))
        {
            Assert.Equal(0, raw.Scalar("""SELECT COUNT(*) FROM "Block" """));
        }

        await Write(path, 0, Blocks / 2);
        await AssertEveryBlockFound(path, 100_000);
        using (var raw = new RawSql(path))
        {
            Assert.Equal(Blocks / 2 + 20, raw.Scalar("""SELECT COUNT(*) FROM "Block" """));
            Assert.Equal(Blocks + 1, raw.Scalar("""SELECT MIN("ID") FROM "Block" """));
        }
    }

    /// <summary>A batch rolled back (its IDs then reused by other blocks), and one left open when the database is disposed under its session (committed by that dispose before the snapshot is written): the map's stale entries are written but no row is missed and no stale ID is returned.</summary>
    [Fact]
    public async Task Rolled_back_and_abandoned_batches_before_the_dispose_leave_no_block_missed()
    {
        var path = _folder.File("rolled.db");
        await Write(path, 0, Blocks);
        var db = Open(path);
        var session = await db.OpenSessionAsync();
        for (var i = 10_000; i < 10_100; i++)
        {
            await session.SelectXorInsertAsync(TestData.Block(i, SizeOf(i)));
        }

        await session.RollbackAsync();
        for (var i = 20_000; i < 20_100; i++)
        {
            await session.SelectXorInsertAsync(TestData.Block(i, SizeOf(i))); // the IDs the rolled-back batch had
        }

        await session.CommitAsync();
        for (var i = 30_000; i < 30_100; i++)
        {
            await session.SelectXorInsertAsync(TestData.Block(i, SizeOf(i)));
        }

        await db.DisposeAsync(); // disposes the session first, which commits its open batch, then writes the snapshot
        await session.DisposeAsync();

        using (var raw = new RawSql(path))
        {
            Assert.Equal(Blocks + 200, raw.Scalar("""SELECT COUNT(*) FROM "Block" """));
        }

        await AssertEveryBlockFound(path, 10_000);
        await AssertEveryBlockFound(path, 40_000);
    }

    /// <summary>
    /// A file at the snapshot's name that is not a snapshot (here another BlockDb database, named after the first one's
    /// snapshot) is never replaced: the write is skipped and that file's committed data kept.
    /// </summary>
    [Fact]
    public async Task A_file_that_is_not_a_snapshot_at_the_snapshots_name_is_never_replaced()
    {
        var path = _folder.File("x.db");
        var other = KeyMapFileFormat.PathOf(path);
        await Write(other, 0, 100); // a database whose name is x.db's snapshot name
        var before = await File.ReadAllBytesAsync(other);

        var log = await Write(path, 1000, 1000 + Blocks);
        Assert.Equal(0, log.Count(13, "KeyMapSnapshotWritten"));
        Assert.Equal(before, await File.ReadAllBytesAsync(other));
        Assert.Empty(Directory.GetFiles(_folder.Path, "*.tmp"));
        using (var raw = new RawSql(other))
        {
            Assert.Equal(100, raw.Scalar("""SELECT COUNT(*) FROM "Block" """));
        }

        await AssertEveryBlockFound(path, 100_000);
    }

    /// <summary>
    /// Opens with the snapshot Off leave the old snapshot and its token in place while they write, collect and repair:
    /// when it is switched on again the old snapshot is used only where it still holds, and nothing is missed.
    /// </summary>
    [Fact]
    public async Task Writes_with_the_snapshot_off_then_on_again_miss_nothing()
    {
        var path = _folder.File("offon.db");
        static void Off(BlockDbOptions o) => o.Index.KeyMapFile = KeyMapFileMode.Off;
        await Write(path, 0, Blocks);
        await Write(path, Blocks, Blocks + 200, Off);
        await using (var db = Open(path, configure: Off))
        await using (var session = await db.OpenSessionAsync())
        {
            await session.DeleteUnreferencedBlocksAsync();
            await session.CommitAsync();
        }

        await Write(path, 0, 100, Off); // the collected blocks again, at new IDs
        var (source, refused) = await FirstLookup(path); // its anchor was collected: refused, read from the table
        Assert.Equal("scan", source);
        Assert.Contains("no longer holds", refused, StringComparison.Ordinal);
        await AssertEveryBlockFound(path, 100_000);
        using var raw = new RawSql(path);
        Assert.Equal(120, raw.Scalar("""SELECT COUNT(*) FROM "Block" """));
    }
}
