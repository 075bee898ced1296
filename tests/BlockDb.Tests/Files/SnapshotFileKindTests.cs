using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.KeyMap;
using BlockDb.Opening;

namespace BlockDb.Tests.Files;

/// <summary>
/// The key-map snapshot (<c>&lt;database&gt;-blockdb-keymap</c>) is BlockDb's own regular file: anything else at its name
/// (a FIFO, whose open blocks until a writer comes; a symbolic link, which could point at one or at another database's
/// snapshot) is refused without being opened, logged, and never replaced, so no lookup, read-only open or dispose waits
/// on it. Each scenario runs under a timeout, so a regression fails instead of hanging the suite.
/// </summary>
public sealed class SnapshotFileKindTests : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private readonly TempFolder _folder = new();

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_fifo_at_the_snapshot_name_is_refused_and_the_first_lookup_reads_the_table(string provider)
    {
        // Before: FindBlockAsync with a 2 s token was still blocked at 8 s (File.Exists, then an open that waits for a writer).
        var (path, id) = await FileWithFifoSnapshot(provider);
        var log = new CapturingLoggerFactory();
        await Bounded(path, async () =>
        {
            await using var db = Open(path, provider, log);
            await using var session = await db.OpenSessionAsync();
            Assert.Equal(id, await session.FindBlockAsync(TestData.Block(1, 10)));
        });
        Assert.Contains(log.Messages, m => m.Id == 12 && m.Text.Contains("FIFO", StringComparison.Ordinal));
        Assert.Equal(FileKind.Special, FileKey.KindOf(KeyMapFileFormat.PathOf(path)));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_fifo_at_the_snapshot_name_is_refused_by_a_read_only_open(string provider)
    {
        var (path, id) = await FileWithFifoSnapshot(provider);
        await Bounded(path, async () =>
        {
            await using var db = Open(path, provider, readOnly: true);
            await using var session = await db.OpenSessionAsync();
            Assert.Equal(id, await session.FindBlockAsync(TestData.Block(1, 10)));
        });
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Disposing_beside_a_fifo_at_the_snapshot_name_returns_and_leaves_it_alone(string provider)
    {
        // Before: DisposeAsync was still blocked at 18 s (the writer opened the FIFO to see whether it was a snapshot).
        // The FIFO comes after the map loaded from the real snapshot, so only the dispose meets it.
        var path = _folder.File("dispose.db");
        await Fill(path, provider);
        var log = new CapturingLoggerFactory();
        await Bounded(path, async () =>
        {
            await using var db = Open(path, provider, log);
            await using (var session = await db.OpenSessionAsync())
            {
                await session.SelectXorInsertAsync(TestData.Block(2, 10));
            }

            File.Delete(KeyMapFileFormat.PathOf(path));
            FileTools.Fifo(KeyMapFileFormat.PathOf(path));
        });
        Assert.Contains(log.Messages, m => m.Id == 14 && m.Text.Contains("FIFO", StringComparison.Ordinal));
        Assert.Equal(FileKind.Special, FileKey.KindOf(KeyMapFileFormat.PathOf(path)));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_symbolic_link_at_the_snapshot_name_is_not_followed(string provider)
    {
        // A link to a valid snapshot of this very file: refused all the same (BlockDb never makes one; it could as well
        // point at a FIFO or at another database's snapshot), and not replaced by the next dispose.
        var path = _folder.File("linked.db");
        await Fill(path, provider);
        var snapshot = KeyMapFileFormat.PathOf(path);
        File.Move(snapshot, _folder.File("elsewhere"));
        File.CreateSymbolicLink(snapshot, _folder.File("elsewhere"));
        var log = new CapturingLoggerFactory();
        await Bounded(path, async () =>
        {
            await using var db = Open(path, provider, log);
            await using var session = await db.OpenSessionAsync();
            Assert.NotNull(await session.FindBlockAsync(TestData.Block(1, 10)));
        });
        Assert.Contains(log.Messages, m => m.Id == 12 && m.Text.Contains("symbolic link", StringComparison.Ordinal));
        Assert.Equal(FileKind.SymbolicLink, FileKey.KindOf(snapshot));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_cancelled_snapshot_read_throws_and_the_next_load_uses_the_snapshot(string provider)
    {
        var path = _folder.File("cancel.db");
        await Fill(path, provider);
        using var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadOnly));
        var snapshot = new KeyMapFile(path, new CapturingLoggerFactory().CreateLogger("test"));
        var hasher = KeyMapFile.ReadHasher(connection);
        using var cancelled = new CancellationTokenSource();
        await cancelled.CancelAsync();
        Assert.Throws<OperationCanceledException>(() => snapshot.TryLoad(connection, hasher, 1L << 30, out _, cancelled.Token));
        Assert.NotNull(snapshot.TryLoad(connection, hasher, 1L << 30, out var refused, CancellationToken.None));
        Assert.Null(refused);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_lookup_cancelled_while_the_map_loads_its_snapshot_throws_and_the_next_lookup_loads_it(string provider)
    {
        // The call's token reaches the snapshot read: it is cancelled when the map's load begins (the load's activity
        // starts on the calling thread), after the session's gate checked it.
        var path = _folder.File("cancel-call.db");
        var id = await Fill(path, provider);
        var log = new CapturingLoggerFactory();
        await using var db = Open(path, provider, log);
        await using var session = await db.OpenSessionAsync();
        using var cancel = new CancellationTokenSource();
        var thread = Environment.CurrentManagedThreadId;
        using var listener = new System.Diagnostics.ActivityListener
        {
            ShouldListenTo = source => source.Name == Instruments.ActivitySource.Name,
            Sample = (ref System.Diagnostics.ActivityCreationOptions<System.Diagnostics.ActivityContext> _) => System.Diagnostics.ActivitySamplingResult.AllData,
            ActivityStarted = activity =>
            {
                if (activity.OperationName == "blockdb.keymap.load" && Environment.CurrentManagedThreadId == thread)
                {
                    cancel.Cancel();
                }
            },
        };
        System.Diagnostics.ActivitySource.AddActivityListener(listener);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await session.FindBlockAsync(TestData.Block(1, 10), cancel.Token));
        Assert.Equal(id, await session.FindBlockAsync(TestData.Block(1, 10)));
        Assert.Contains(log.Messages, m => m.Id == 10 && m.Text.Contains("from snapshot", StringComparison.Ordinal));
    }

    private static IBlockDatabase Open(string path, string provider, CapturingLoggerFactory? log = null, bool readOnly = false) =>
        new BlockDatabaseBuilder(new BlockDbOptions { Provider = provider, DataSource = path, ReadOnly = readOnly, Index = { Layout = BlockLayout.KeyMap } })
            .UseLoggerFactory(log ?? new CapturingLoggerFactory())
            .Build();

    /// <summary>A KeyMap file holding block 1 (its snapshot written by the dispose); returns the block's ID.</summary>
    private static async Task<long> Fill(string path, string provider)
    {
        await using var db = Open(path, provider);
        await using var session = await db.OpenSessionAsync();
        return (await session.SelectXorInsertAsync(TestData.Block(1, 10))).Id;
    }

    /// <summary>A KeyMap file holding block 1, with a FIFO in place of its snapshot.</summary>
    private async Task<(string Path, long Id)> FileWithFifoSnapshot(string provider)
    {
        var path = _folder.File("fifo.db");
        var id = await Fill(path, provider);
        File.Delete(KeyMapFileFormat.PathOf(path));
        FileTools.Fifo(KeyMapFileFormat.PathOf(path));
        return (path, id);
    }

    /// <summary>Runs <paramref name="scenario"/> on the thread pool; past <see cref="Timeout"/> the test fails, and the FIFO is opened for writing so the stuck thread's open returns.</summary>
    private static async Task Bounded(string path, Func<Task> scenario)
    {
        var run = Task.Run(scenario);
        try
        {
            await run.WaitAsync(Timeout);
        }
        catch (TimeoutException)
        {
            _ = Task.Run(() => new FileStream(KeyMapFileFormat.PathOf(path), FileMode.Open, FileAccess.Write).Dispose()).Wait(TimeSpan.FromSeconds(5));
            Assert.Fail($"Still blocked after {Timeout.TotalSeconds:N0} s beside a FIFO at the snapshot's name.");
        }
    }
}
