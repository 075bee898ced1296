using System.Security.Cryptography;
using BlockDb.KeyMap;

namespace BlockDb.Tests.KeyMap;

/// <summary>
/// The persisted key map (issue 13 item 6): used after a reopen when it belongs to the file as it is, refused (and the
/// map read from the table) for every other reason, and never the cause of a missed block: every test ends by finding
/// every block of the file through the reopened map and checking that no insert made a duplicate.
/// </summary>
public sealed class KeyMapSnapshotTests : IDisposable
{
    private const int Blocks = 3000;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static TheoryData<string> SqliteProviders() => ["PInvoke", "SystemData", "MicrosoftData"];

    private static long SizeOf(int i) => 1000 + (i % 7);

    private static IBlockDatabase Open(string path, string provider, CapturingLoggerFactory? log = null, Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = BlockLayout.KeyMap }, Pragmas = { BusyTimeout = 5000 } };
        configure?.Invoke(options);
        return new BlockDatabaseBuilder(options).UseLoggerFactory(log ?? new CapturingLoggerFactory()).Build();
    }

    /// <summary>Select-xor-inserts blocks <paramref name="from"/> to <paramref name="to"/> − 1 and disposes the database (which writes the snapshot unless told not to).</summary>
    private static async Task<CapturingLoggerFactory> Write(string path, string provider, int from, int to, Action<BlockDbOptions>? configure = null)
    {
        var log = new CapturingLoggerFactory();
        await using (var db = Open(path, provider, log, configure))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = from; i < to; i++)
            {
                await session.SelectXorInsertAsync(TestData.Block(i, SizeOf(i)));
            }
        }

        return log;
    }

    private static bool Wrote(CapturingLoggerFactory log) => log.Count(13, "KeyMapSnapshotWritten") == 1;

    /// <summary>Opens the file, makes the first lookup, and returns how the map loaded ("snapshot" or "scan") and the refusal, if any.</summary>
    private static async Task<(string Source, string? Refused)> FirstLookup(string path, string provider, Action<BlockDbOptions>? configure = null)
    {
        var log = new CapturingLoggerFactory();
        await using (var db = Open(path, provider, log, configure))
        await using (var session = await db.OpenSessionAsync())
        {
            await session.FindBlockAsync(TestData.Block(0, SizeOf(0)));
        }

        var loaded = Assert.Single(log.Messages, m => m.Id == 10);
        var refused = log.Messages.Where(m => m.Id == 12).Select(m => m.Text).SingleOrDefault();
        return (loaded.Text.Contains("from snapshot", StringComparison.Ordinal) ? "snapshot" : "scan", refused);
    }

    /// <summary>
    /// Every block of the file is found at its own ID through a map loaded at this open (the snapshot, when it was
    /// accepted), a select-xor-insert of each returns it without creating it, new blocks are created once, and the file
    /// holds no duplicate; the check finds nothing the map misses.
    /// </summary>
    private static async Task AssertEveryBlockFound(string path, string provider, int newBlocksFrom)
    {
        List<(long Id, string Hash, long Size)> rows;
        using (var raw = new RawSql(path))
        {
            rows = raw.Blocks();
        }

        await using (var db = Open(path, provider))
        await using (var session = await db.OpenSessionAsync())
        {
            foreach (var (id, hash, size) in rows)
            {
                Assert.Equal(id, await session.FindBlockAsync(BlockKey.Parse(hash, size)));
            }

            foreach (var (id, hash, size) in rows.Where((_, i) => i % 5 == 0))
            {
                Assert.Equal(new SelectXorInsertResult(id, false), await session.SelectXorInsertAsync(BlockKey.Parse(hash, size)));
            }

            for (var i = newBlocksFrom; i < newBlocksFrom + 50; i++)
            {
                Assert.True((await session.SelectXorInsertAsync(TestData.Block(i, SizeOf(i)))).Created);
            }

            await session.CommitAsync();
            var check = await db.CheckAsync();
            Assert.False(check.MapMissing.Found);
            Assert.False(check.Duplicates.Found);
        }

        using var after = new RawSql(path);
        Assert.Equal(0, after.DuplicateGroups());
    }

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public async Task The_snapshot_is_used_after_a_reopen_and_every_block_is_found(string provider)
    {
        var path = _folder.File("used.db");
        Assert.True(Wrote(await Write(path, provider, 0, Blocks)));
        Assert.True(File.Exists(KeyMapFileFormat.PathOf(path)));

        Assert.Equal(("snapshot", null), await FirstLookup(path, provider));
        await AssertEveryBlockFound(path, provider, 100_000);
        Assert.Empty(Directory.GetFiles(_folder.Path, "*.tmp"));
    }

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public async Task Blocks_added_after_the_snapshot_are_caught_up_above_its_watermark(string provider)
    {
        var path = _folder.File("grown.db");
        await Write(path, provider, 0, Blocks);

        // Another writer that writes no snapshot adds blocks above W, and a foreign SQL writer adds one above MaxBlockId.
        Assert.False(Wrote(await Write(path, provider, Blocks, Blocks + 500, o => o.Index.KeyMapFile = KeyMapFileMode.Off)));
        using (var raw = new RawSql(path))
        {
            raw.InsertBlock(TestData.Hash(200_000), 77, id: 10_000);
        }

        Assert.Equal(("snapshot", null), await FirstLookup(path, provider));
        await AssertEveryBlockFound(path, provider, 100_000);
    }

    [Fact]
    public async Task A_map_loaded_from_the_snapshot_and_unchanged_is_not_written_again()
    {
        var path = _folder.File("unchanged.db");
        await Write(path, "PInvoke", 0, Blocks);
        var written = File.GetLastWriteTimeUtc(KeyMapFileFormat.PathOf(path));

        var log = await Write(path, "PInvoke", 0, 100); // only known blocks
        Assert.False(Wrote(log));
        Assert.Equal(written, File.GetLastWriteTimeUtc(KeyMapFileFormat.PathOf(path)));
        Assert.Equal(("snapshot", null), await FirstLookup(path, "PInvoke"));
    }

    public static TheoryData<string, string> Refusals() => new()
    {
        { "edited byte", "checksum" },
        { "truncated", "torn or truncated" },
        { "other FileId", "another database file" },
        { "foreign insert below MaxBlockId", "generation" },
        { "schema change", "schema version" },
        { "anchor collected", "no longer holds" },
        { "snapshot of another file", "another database file" },
        { "not a snapshot", "magic" },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task A_snapshot_that_does_not_match_the_file_is_refused_and_the_map_read_from_the_table(string change, string reason)
    {
        var path = _folder.File("refused.db");
        var snapshot = KeyMapFileFormat.PathOf(path);
        await Write(path, "PInvoke", 0, Blocks);
        switch (change)
        {
            case "edited byte":
                using (var stream = File.Open(snapshot, FileMode.Open))
                {
                    stream.Position = stream.Length / 2;
                    var b = stream.ReadByte();
                    stream.Position = stream.Length / 2;
                    stream.WriteByte((byte)(b ^ 0x10));
                }

                break;
            case "truncated":
                using (var stream = File.Open(snapshot, FileMode.Open))
                {
                    stream.SetLength(stream.Length - 8);
                }

                break;
            case "other FileId":
                using (var raw = new RawSql(path))
                {
                    raw.Execute($"""UPDATE "BlockDbSettings" SET "Value" = '{Guid.NewGuid():N}' WHERE "Name" = 'FileId'""");
                }

                break;
            case "foreign insert below MaxBlockId":
                // A foreign writer deletes a block (harmless) and puts another block at its ID: the guard moves the generation.
                using (var raw = new RawSql(path))
                {
                    raw.Execute("""DELETE FROM "Block" WHERE "ID" = 17""");
                    raw.InsertBlock(TestData.Hash(300_000), 5, id: 17);
                }

                break;
            case "schema change":
                using (var raw = new RawSql(path))
                {
                    raw.Execute("""CREATE TABLE "Extra" ("X" INTEGER)""");
                }

                break;
            case "anchor collected":
                using (var raw = new RawSql(path))
                {
                    raw.Execute($"""DELETE FROM "Block" WHERE "ID" = {Blocks}""");
                }

                break;
            case "snapshot of another file":
                var other = _folder.File("other.db");
                await Write(other, "PInvoke", 0, Blocks); // the same blocks, another file
                File.Copy(KeyMapFileFormat.PathOf(other), snapshot, overwrite: true);
                break;
            case "not a snapshot":
                File.WriteAllBytes(snapshot, new byte[4096]);
                break;
        }

        var (source, refused) = await FirstLookup(path, "PInvoke");
        Assert.Equal("scan", source);
        Assert.NotNull(refused);
        Assert.Contains(reason, refused, StringComparison.Ordinal);
        await AssertEveryBlockFound(path, "PInvoke", 100_000);
    }

    [Fact]
    public async Task A_restored_older_copy_of_the_database_that_grew_again_refuses_the_newer_snapshot()
    {
        var path = _folder.File("restored.db");
        var backup = _folder.File("backup.db");
        await Write(path, "PInvoke", 0, Blocks);
        File.Copy(path, backup); // the database alone, as a file-level backup would copy it (no WAL: the dispose checkpointed)

        // The original grows and writes a snapshot covering IDs up to Blocks + 500.
        Assert.True(Wrote(await Write(path, "PInvoke", Blocks, Blocks + 500)));

        // The older copy comes back and grows again past that watermark with other blocks, writing no snapshot.
        foreach (var suffix in (string[])["", "-wal", "-shm"])
        {
            File.Delete(path + suffix);
        }

        File.Copy(backup, path);
        await Write(path, "PInvoke", 50_000, 50_000 + 800, o => o.Index.KeyMapFile = KeyMapFileMode.Off);

        var (source, refused) = await FirstLookup(path, "PInvoke");
        Assert.Equal("scan", source);
        Assert.Contains("token", refused, StringComparison.Ordinal);
        await AssertEveryBlockFound(path, "PInvoke", 100_000);
    }

    [Fact]
    public async Task A_database_restored_together_with_its_snapshot_uses_it()
    {
        var path = _folder.File("pair.db");
        await Write(path, "PInvoke", 0, Blocks);
        File.Copy(path, _folder.File("pair-backup.db"));
        File.Copy(KeyMapFileFormat.PathOf(path), _folder.File("pair-backup.snapshot"));
        await Write(path, "PInvoke", Blocks, Blocks + 500);

        File.Delete(path + "-wal");
        File.Copy(_folder.File("pair-backup.db"), path, overwrite: true);
        File.Copy(_folder.File("pair-backup.snapshot"), KeyMapFileFormat.PathOf(path), overwrite: true);

        Assert.Equal(("snapshot", null), await FirstLookup(path, "PInvoke"));
        await AssertEveryBlockFound(path, "PInvoke", 100_000);
    }

    [Fact]
    public async Task A_repair_that_renumbers_moves_the_generation_so_the_snapshot_is_refused()
    {
        var path = _folder.File("repair.db");
        await Write(path, "PInvoke", 0, Blocks);
        using (var raw = new RawSql(path))
        {
            // An out-of-range ID (written with the guards dropped, as an old file may hold it) that the repair renumbers.
            raw.Execute("""DROP TRIGGER "BlockDbGuardInsert" """);
            raw.InsertBlock(TestData.Hash(400_000), 9, id: 5_000_000_000);
        }

        await using (var db = Open(path, "PInvoke", configure: o => o.Index.KeyMapFile = KeyMapFileMode.Off))
        {
            var repaired = await db.RepairAsync();
            Assert.Equal(1, repaired.RenumberedBlocks);
        }

        var (source, refused) = await FirstLookup(path, "PInvoke");
        Assert.Equal("scan", source);
        Assert.NotNull(refused);
        await AssertEveryBlockFound(path, "PInvoke", 100_000);
    }

    [Fact]
    public async Task A_read_only_open_uses_the_snapshot_and_never_writes_one()
    {
        var path = _folder.File("ro.db");
        await Write(path, "PInvoke", 0, Blocks);
        var bytes = File.ReadAllBytes(KeyMapFileFormat.PathOf(path));
        using (var raw = new RawSql(path))
        {
            raw.InsertBlock(TestData.Hash(500_000), 3, id: 20_000); // so a writer would have something new to write
        }

        Assert.Equal(("snapshot", null), await FirstLookup(path, "PInvoke", o => o.ReadOnly = true));
        Assert.Equal(bytes, File.ReadAllBytes(KeyMapFileFormat.PathOf(path)));
    }

    [Fact]
    public async Task Off_neither_reads_nor_writes_a_snapshot()
    {
        var path = _folder.File("off.db");
        Assert.False(Wrote(await Write(path, "PInvoke", 0, Blocks, o => o.Index.KeyMapFile = KeyMapFileMode.Off)));
        Assert.False(File.Exists(KeyMapFileFormat.PathOf(path)));

        await Write(path, "PInvoke", 0, 10);
        Assert.True(File.Exists(KeyMapFileFormat.PathOf(path)));
        Assert.Equal(("scan", null), await FirstLookup(path, "PInvoke", o => o.Index.KeyMapFile = KeyMapFileMode.Off));
    }

    [Fact]
    public async Task A_snapshot_that_cannot_be_written_is_logged_and_the_dispose_succeeds()
    {
        var path = _folder.File("blocked.db");
        Directory.CreateDirectory(KeyMapFileFormat.PathOf(path)); // a folder where the file would go: the rename fails
        var log = await Write(path, "PInvoke", 0, Blocks);
        Assert.Equal(1, log.Count(15, "KeyMapSnapshotWriteFailed"));
        Assert.Empty(Directory.GetFiles(_folder.Path, "*.tmp"));

        Directory.Delete(KeyMapFileFormat.PathOf(path));
        Assert.Equal(("scan", null), await FirstLookup(path, "PInvoke"));
        await AssertEveryBlockFound(path, "PInvoke", 100_000);
    }

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public async Task Two_databases_in_one_process_disposing_at_once_leave_a_snapshot_that_loads_or_is_refused(string provider)
    {
        var path = _folder.File("two.db");
        await Write(path, provider, 0, Blocks);
        for (var round = 0; round < 3; round++)
        {
            var a = Open(path, provider);
            var b = Open(path, provider);
            await using (var sa = await a.OpenSessionAsync())
            await using (var sb = await b.OpenSessionAsync())
            {
                // One writer at a time (each holds the write lock until it commits); both maps end up holding new entries.
                for (var i = 0; i < 300; i++)
                {
                    await sa.SelectXorInsertAsync(TestData.Block(10_000 + (round * 1000) + i, SizeOf(i)));
                }

                await sa.CommitAsync();
                for (var i = 0; i < 300; i++)
                {
                    await sb.SelectXorInsertAsync(TestData.Block(20_000 + (round * 1000) + i, SizeOf(i)));
                }

                await sb.CommitAsync();
            }

            await Task.WhenAll(Task.Run(async () => await a.DisposeAsync()), Task.Run(async () => await b.DisposeAsync()));
            var (source, refused) = await FirstLookup(path, provider);
            Assert.True(source == "snapshot" || refused is not null, $"round {round}: {source}, {refused}");
            await AssertEveryBlockFound(path, provider, 100_000 + (round * 100));
        }

        Assert.Empty(Directory.GetFiles(_folder.Path, "*.tmp"));
    }

    [Fact]
    public async Task Two_processes_disposing_at_once_leave_a_snapshot_that_loads_or_is_refused()
    {
        var path = _folder.File("procs.db");
        await Write(path, "PInvoke", 0, Blocks);
        using (var first = new ChildProcess("snapshot", path, "PInvoke", "1"))
        using (var second = new ChildProcess("snapshot", path, "MicrosoftData", "2"))
        {
            await first.Ready.WaitAsync(TimeSpan.FromMinutes(2));
            await second.Ready.WaitAsync(TimeSpan.FromMinutes(2));
            Assert.Contains("READY", first.Lines);
            Assert.Contains("READY", second.Lines);
            await File.WriteAllTextAsync(path + ".go", "go");
            Assert.Equal(0, await first.WaitForExitAsync(TimeSpan.FromMinutes(2)));
            Assert.Equal(0, await second.WaitForExitAsync(TimeSpan.FromMinutes(2)));
            Assert.Contains("DONE", first.Lines);
            Assert.Contains("DONE", second.Lines);
        }

        var (source, refused) = await FirstLookup(path, "PInvoke");
        Assert.True(source == "snapshot" || refused is not null, $"{source}, {refused}");
        await AssertEveryBlockFound(path, "PInvoke", 100_000);

        // Both children's own blocks are there (the hashes the child computes), each once.
        using var raw = new RawSql(path);
        var blocks = raw.Blocks().Select(r => r.Hash).ToHashSet();
        foreach (var seed in (int[])[1, 2])
        {
            Assert.Contains(Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes((seed * 1_000_000) + 1999))), blocks);
        }

        Assert.Empty(Directory.GetFiles(_folder.Path, "*.tmp"));
    }

    [Fact]
    public async Task A_temporary_file_abandoned_by_a_killed_writer_is_deleted_by_the_next_write_and_a_fresh_one_is_kept()
    {
        var path = _folder.File("abandoned.db");
        var old = KeyMapFileFormat.PathOf(path) + ".999999.0123456789abcdef0123456789abcdef.tmp";
        var fresh = KeyMapFileFormat.PathOf(path) + ".999998.0123456789abcdef0123456789abcdef.tmp";
        File.WriteAllBytes(old, [1, 2, 3]);
        File.WriteAllBytes(fresh, [1, 2, 3]);
        File.SetLastWriteTimeUtc(old, DateTime.UtcNow - KeyMapFileFormat.AbandonedAfter - TimeSpan.FromMinutes(1));

        Assert.True(Wrote(await Write(path, "PInvoke", 0, 100)));
        Assert.False(File.Exists(old));
        Assert.True(File.Exists(fresh)); // another writer's, perhaps still writing
    }

    [Fact]
    public void A_key_depends_on_the_seed_and_on_every_input()
    {
        var hash = SHA256.HashData(BitConverter.GetBytes(1));
        var a = new KeyHasher(1);
        var b = new KeyHasher(2);
        Assert.Equal(a.KeyOf(hash, 10), new KeyHasher(1).KeyOf(hash, 10));
        Assert.NotEqual(a.KeyOf(hash, 10), b.KeyOf(hash, 10));
        Assert.NotEqual(a.KeyOf(hash, 10), a.KeyOf(hash, 11));
        Assert.NotEqual(a.KeyOf(hash, 10), a.KeyOf(hash.AsSpan(0, 31), 10));
        Assert.DoesNotContain("1", a.ToString(), StringComparison.Ordinal); // the seed never reaches a log through ToString
    }
}
