using System.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Durability;

/// <summary>Faults and hostile input: each gets a typed error, no hang, no corruption, no lost acknowledged data.</summary>
public sealed class FaultTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_lock_held_by_another_process_beyond_busy_timeout_gives_sqlite_busy_without_hanging(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using (var db = Open())
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 1));
        }

        await using var open = Open(o => { o.Pragmas.BusyTimeout = 200; o.Batching.CommitEvery = 1; });
        await using var writer = await open.OpenSessionAsync();
        using var locker = new ChildProcess("lock", DbPath, Provider, "8000");
        await locker.Ready.WaitAsync(TimeSpan.FromSeconds(60));

        var clock = Stopwatch.StartNew();
        var e = await Assert.ThrowsAsync<BlockDbException>(async () => await writer.SelectXorInsertAsync(TestData.Block(2, 1)));
        Assert.Equal(SqliteResultCode.Busy, e.SqliteErrorCode);
        Assert.True(e.IsTransient);
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(5), $"waited {clock.Elapsed} for a 200 ms busy_timeout");

        // Opening and reading need no write lock: a reader opens beside the writer (issue 10, defect 7).
        await using (var beside = Open(o => o.Pragmas.BusyTimeout = 200))
        await using (var reader = await beside.OpenSessionAsync())
        {
            Assert.NotNull(await reader.FindBlockAsync(TestData.Block(1, 1)));
        }

        locker.Kill();
        Assert.True((await writer.SelectXorInsertAsync(TestData.Block(2, 1))).Created);
        Assert.Equal(2, (await writer.GetCountsAsync()).Blocks);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_full_disk_gives_sqlite_full_and_keeps_every_committed_write(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        using var disk = SmallDisk.Mount(Folder.File("full"), sizeKiB: 640);
        var path = Path.Combine(disk.Path, "index.db");
        long committed = 0;
        BlockDbException? full = null;
        await using (var db = BlockDatabase.Open(Options(o => { o.DataSource = path; o.Batching.CommitEvery = 50; })))
        await using (var session = await db.OpenSessionAsync())
        {
            try
            {
                for (var i = 0; i < 1_000_000; i++)
                {
                    await session.SelectXorInsertAsync(TestData.Block(i, 1 + i));
                    if (session.PendingWrites == 0)
                    {
                        committed = i + 1;
                    }
                }
            }
            catch (BlockDbException e)
            {
                full = e;
            }

            Assert.NotNull(full);
            Assert.Equal(SqliteResultCode.Full, full.SqliteErrorCode);
            try
            {
                await session.RollbackAsync();
            }
            catch (BlockDbException)
            {
                // The batch may already be gone; what matters is the file below.
            }
        }

        Assert.True(committed > 100, $"only {committed} writes fit");
        using (var raw = ProviderCatalog.SqliteDriver(Provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite)))
        {
            Assert.Equal("ok", raw.QueryText("PRAGMA integrity_check"));
        }

        await using var reopened = BlockDatabase.Open(Options(o => o.DataSource = path));
        await using var check = await reopened.OpenSessionAsync();
        Assert.True((await check.GetCountsAsync()).Blocks >= committed);
        for (var i = 0; i < committed; i += 97)
        {
            Assert.NotNull(await check.FindBlockAsync(TestData.Block(i, 1 + i)));
        }
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_read_only_file_gives_sqlite_readonly_and_is_not_changed(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using (var db = Open(o => o.Pragmas.Preset = PragmaPreset.SqliteDefaults))
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 1));
        }

        var before = await File.ReadAllBytesAsync(DbPath);
        using (ReadOnlyFile.Protect(DbPath))
        {
            // Opening may fail at once or at the first write, depending on the provider; either way with SQLITE_READONLY or SQLITE_CANTOPEN.
            var e = await Assert.ThrowsAsync<BlockDbException>(async () =>
            {
                await using var db = Open(o => o.Pragmas.Preset = PragmaPreset.SqliteDefaults);
                await using var session = await db.OpenSessionAsync();
                await session.SelectXorInsertAsync(TestData.Block(2, 1));
            });
            Assert.Contains(e.SqliteErrorCode, new int?[] { SqliteResultCode.ReadOnly, SqliteResultCode.CantOpen });
        }

        Assert.Equal(before, await File.ReadAllBytesAsync(DbPath));
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_truncated_file_gives_a_typed_error_not_a_hang_or_a_crash(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using (var db = Open(o => o.Pragmas.Preset = PragmaPreset.SqliteDefaults))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = 0; i < 3000; i++)
            {
                await session.SelectXorInsertAsync(TestData.Block(i, i + 1));
            }
        }

        await using (var file = new FileStream(DbPath, FileMode.Open))
        {
            file.SetLength(file.Length / 2);
        }

        var e = await Assert.ThrowsAsync<BlockDbException>(async () =>
        {
            await using var db = Open(o => o.Pragmas.Preset = PragmaPreset.SqliteDefaults);
            await using var session = await db.OpenSessionAsync();
            for (var i = 0; i < 3000; i++)
            {
                await session.FindBlockAsync(TestData.Block(i, i + 1));
            }

            await session.SelectXorInsertAsync(TestData.Block(-1, 1));
            await session.CommitAsync();
            using var raw = ProviderCatalog.SqliteDriver(Provider).Open(new SqliteOpenOptions(DbPath, SqliteOpenMode.ReadOnly));
            throw new BlockDbException("integrity_check: " + raw.QueryText("PRAGMA integrity_check"), SqliteResultCode.Corrupt, SqliteResultCode.Corrupt, null);
        });
        Assert.Contains(e.SqliteErrorCode, new int?[] { SqliteResultCode.Corrupt, SqliteResultCode.NotADatabase, SqliteResultCode.IOError });
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Sessions_and_shared_repositories_leak_no_file_handles(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        // Warm up: the native library and the drivers' one-time state.
        await using (var warm = Open())
        {
            await using var s = await warm.OpenSessionAsync();
        }

        var before = OpenHandlesTo(Folder.Path);
        for (var round = 0; round < 10; round++)
        {
            await using var db = Open();
            await using var session = await db.OpenSessionAsync();
            await session.SelectXorInsertAsync(TestData.Block(round, 1));
            await session.CommitAsync(); // an open batch holds the write lock; the shared writer would wait for it
            await using var shared = db.OpenSharedSession();
            await shared.SelectXorInsertAsync(TestData.Block(1000 + round, 1));
            await shared.GetCountsAsync();
            Assert.True(OpenHandlesTo(Folder.Path) > before);
        }

        Assert.Equal(before, OpenHandlesTo(Folder.Path));
        File.Delete(DbPath);
        Assert.False(File.Exists(DbPath));
    }

    private static int OpenHandlesTo(string folder) =>
        new DirectoryInfo("/proc/self/fd").EnumerateFileSystemInfos()
            .Count(fd => fd.LinkTarget is { } target && target.StartsWith(folder, StringComparison.Ordinal));
}
