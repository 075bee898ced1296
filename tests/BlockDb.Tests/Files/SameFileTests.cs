using BlockDb.Drivers;
using BlockDb.Opening;
using BlockDb.Sqlite;

namespace BlockDb.Tests.Files;

/// <summary>
/// One file reached by several paths (linked folders, hard links) is one file for everything BlockDb keeps per file in
/// the process (invariant FK1 of docs/ARCHITECTURE.md): the commit clock that ends sessions' read snapshots, so a block
/// committed through one path is found through the other at once, and the close guard's gate.
/// </summary>
public sealed class SameFileTests : IDisposable
{
    private const int Rounds = 50;
    private readonly TempFolder _folder = new();

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_block_committed_through_one_path_is_found_at_once_through_a_linked_folder(string provider)
    {
        // Before FK1 the commit clock was keyed by the path as given: 200 of 200 such reads missed the block.
        var real = Directory.CreateDirectory(_folder.File("real")).FullName;
        Directory.CreateSymbolicLink(_folder.File("link"), real);
        var path = Path.Combine(real, "c.db");
        await using var writer = Open(path, provider);
        await using var reader = Open(Path.Combine(_folder.File("link"), "c.db"), provider);
        Assert.Equal(0, await MissedReads(writer, reader));
    }

    [Fact]
    public void Every_path_to_one_file_gets_one_commit_clock()
    {
        // Hard links are checked here, on the registry, not through two databases: SQLite gives each name of a file its
        // own WAL, so a second name fails its reads in WAL mode (SQLITE_IOERR_SHORT_READ, 522) and a held read
        // snapshot blocks the other name's commit in the rollback-journal modes (sqlite.org/howtocorrupt.html, 2.5).
        var real = Directory.CreateDirectory(_folder.File("real")).FullName;
        var path = Path.Combine(real, "c.db");
        File.WriteAllBytes(path, []);
        Directory.CreateSymbolicLink(_folder.File("link"), real);
        FileTools.HardLink(path, _folder.File("hard.db"));
        var clocks = new[] { path, Path.Combine(_folder.File("link"), "c.db"), _folder.File("hard.db"), Path.Combine(real, "..", "real", "c.db") }
            .Select(CommitClock.Acquire)
            .ToList();
        try
        {
            Assert.All(clocks, c => Assert.Same(clocks[0], c));
            var other = CommitClock.Acquire(_folder.File("other.db"));
            Assert.NotSame(clocks[0], other);
            other.Release();
        }
        finally
        {
            clocks.ForEach(c => c.Release());
        }
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void A_hard_linked_pair_has_one_close_gate(string provider)
    {
        var driver = ProviderCatalog.SqliteDriver(provider);
        var path = _folder.File("gate.db");
        var first = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate));
        first.Execute("CREATE TABLE t (x)");
        FileTools.HardLink(path, _folder.File("gate-link.db"));
        var second = driver.Open(new SqliteOpenOptions(_folder.File("gate-link.db"), SqliteOpenMode.ReadWrite));
        second.QueryText("SELECT COUNT(*) FROM t");

        // One gate for both names: the close of either beside the other goes through the one sentinel.
        Assert.Equal((2, 0), SqliteCloseGuard.Count(path));
        Assert.Equal((2, 0), SqliteCloseGuard.Count(_folder.File("gate-link.db")));
        second.Dispose();
        Assert.Equal((1, 0), SqliteCloseGuard.Count(path));
        first.Dispose();
        Assert.Equal((0, 0), SqliteCloseGuard.Count(path));
        Assert.Equal(0, ProcessFiles.Descriptors(path));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void A_file_created_by_its_first_open_keeps_one_gate_for_every_later_open(string provider)
    {
        // The key of a file that does not exist is its path; once created, its inode: the open that creates it
        // registers it under the inode, so later opens (by the same path or a hard link made since) find that gate.
        var driver = ProviderCatalog.SqliteDriver(provider);
        var path = _folder.File("new.db");
        Assert.False(File.Exists(path));
        using var creator = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate));
        creator.Execute("CREATE TABLE t (x)");
        using var again = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));
        FileTools.HardLink(path, _folder.File("new-link.db"));
        using var linked = driver.Open(new SqliteOpenOptions(_folder.File("new-link.db"), SqliteOpenMode.ReadWrite));
        Assert.Equal((3, 0), SqliteCloseGuard.Count(path));

        // Created through a symbolic link to a file that does not exist yet: the same.
        File.CreateSymbolicLink(_folder.File("dangling.db"), _folder.File("target.db"));
        using var throughLink = driver.Open(new SqliteOpenOptions(_folder.File("dangling.db"), SqliteOpenMode.ReadWriteCreate));
        throughLink.Execute("CREATE TABLE t (x)");
        using var target = driver.Open(new SqliteOpenOptions(_folder.File("target.db"), SqliteOpenMode.ReadWrite));
        Assert.Equal((2, 0), SqliteCloseGuard.Count(_folder.File("target.db")));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Opens_racing_to_create_a_file_through_two_paths_share_one_gate(string provider)
    {
        // FK1 (a): the file does not exist when the opens start, so one of them creates it while the others key it; every
        // one must land in the gate of its inode, whichever path it came by and whichever open created the file.
        var driver = ProviderCatalog.SqliteDriver(provider);
        var real = Directory.CreateDirectory(_folder.File("race")).FullName;
        Directory.CreateSymbolicLink(_folder.File("race-link"), real);
        const int Opens = 8;
        for (var round = 0; round < 20; round++)
        {
            var name = $"race-{round}.db";
            var paths = new[] { Path.Combine(real, name), Path.Combine(_folder.File("race-link"), name) };
            using var start = new Barrier(Opens);
            var opened = await Task.WhenAll(Enumerable.Range(0, Opens).Select(i => Task.Run(() =>
            {
                start.SignalAndWait();
                return driver.Open(new SqliteOpenOptions(paths[i % 2], SqliteOpenMode.ReadWriteCreate, 5000));
            })));
            try
            {
                Assert.Equal((Opens, 0), SqliteCloseGuard.Count(paths[0]));
                FileTools.HardLink(paths[0], _folder.File($"race-hard-{round}.db"));
                Assert.Equal((Opens, 0), SqliteCloseGuard.Count(_folder.File($"race-hard-{round}.db")));
            }
            finally
            {
                Array.ForEach(opened, c => c.Dispose());
            }

            Assert.Equal((0, 0), SqliteCloseGuard.Count(paths[0]));
        }
    }

    private static IBlockDatabase Open(string path, string provider) =>
        BlockDatabase.Open(new BlockDbOptions
        {
            Provider = provider,
            DataSource = path,

            // Long bounds, so only the commit clock ends the reader's snapshot.
            Batching = { ReadsPerTransaction = 1000, ReadTransactionMilliseconds = 60_000 },
        });

    /// <summary>Commits a block through <paramref name="writer"/> while <paramref name="reader"/>'s session holds a read snapshot, then looks it up there; returns how many lookups missed it.</summary>
    private static async Task<int> MissedReads(IBlockDatabase writer, IBlockDatabase reader)
    {
        await using var write = await writer.OpenSessionAsync();
        await using var read = await reader.OpenSessionAsync();
        var missed = 0;
        for (var i = 0; i < Rounds; i++)
        {
            Assert.Null(await read.FindBlockAsync(TestData.Block(i, 10))); // the reader's snapshot, taken before the commit
            var id = (await write.SelectXorInsertAsync(TestData.Block(i, 10))).Id;
            await write.CommitAsync();
            if (await read.FindBlockAsync(TestData.Block(i, 10)) != id)
            {
                missed++;
            }
        }

        return missed;
    }
}
