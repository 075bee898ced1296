using System.Globalization;
using BlockDb.Drivers;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Durability;

/// <summary>
/// Kills a writer process (SIGKILL) at random moments, then checks the file: it opens, integrity_check is ok,
/// every acknowledged blockset is there with all its blocks, and no blockset is half-written.
/// </summary>
public sealed class DurabilityTests(ITestOutputHelper output) : IDisposable
{
    private const int Trials = 51;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public async Task A_killed_writer_loses_no_acknowledged_blockset_and_leaves_none_half_written()
    {
        var random = new Random(20261122);
        var acknowledged = 0;
        var blocksets = 0;
        for (var trial = 0; trial < Trials; trial++)
        {
            var provider = ProviderCatalog.SqliteNames[trial % ProviderCatalog.SqliteNames.Count];
            var path = _folder.File($"kill-{trial}.db");

            // Some trials kill a writer on a file that already has data from an earlier killed writer.
            var runs = 1 + (trial % 3 == 0 ? 1 : 0);
            var acks = new List<(int Task, int N, long Id)>();
            for (var run = 0; run < runs; run++)
            {
                using var child = new ChildProcess("write", path, provider, "4");
                await child.Ready.WaitAsync(TimeSpan.FromSeconds(60));
                await Task.Delay(random.Next(5, 400));
                child.Kill();
                acks.AddRange(child.Lines.Where(l => l.StartsWith("ACK ", StringComparison.Ordinal)).Select(Parse));
                Assert.DoesNotContain(child.Lines, l => l.StartsWith("stderr:", StringComparison.Ordinal) && l.Contains("Exception", StringComparison.Ordinal));
            }

            var found = await CheckAsync(path, provider, acks);
            acknowledged += acks.Count;
            blocksets += found;
        }

        output.WriteLine($"{Trials} trials, {acknowledged} acknowledged blocksets, {blocksets} blocksets found after the kills, 0 lost, 0 half-written.");
        Assert.True(acknowledged > Trials, $"only {acknowledged} acknowledgements in {Trials} trials: the writer barely ran");
    }

    private static (int Task, int N, long Id) Parse(string line)
    {
        var parts = line.Split(' ');
        return (int.Parse(parts[1], CultureInfo.InvariantCulture), int.Parse(parts[2], CultureInfo.InvariantCulture), long.Parse(parts[3], CultureInfo.InvariantCulture));
    }

    private static async Task<int> CheckAsync(string path, string provider, List<(int Task, int N, long Id)> acks)
    {
        using (var raw = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite)))
        {
            Assert.Equal("ok", raw.QueryText("PRAGMA integrity_check"));
        }

        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
        await using var session = await db.OpenSessionAsync();
        foreach (var (task, n, id) in acks)
        {
            var expected = CrashData.Blocks(task, n);
            var info = await session.GetBlocksetAsync(id);
            Assert.Equal(CrashData.FullHash(task, n), info.FullHash);
            Assert.Equal(expected, (await session.ListBlocksetBlocksAsync(id)).Select(b => b.Block));
        }

        // Every blockset in the file, acknowledged or not, is whole: its entries add up to its length.
        var counts = await session.GetCountsAsync();
        for (long id = 1; id <= counts.Blocksets; id++)
        {
            var info = await session.GetBlocksetAsync(id);
            var blocks = await session.ListBlocksetBlocksAsync(id);
            Assert.Equal(info.Length, blocks.Sum(b => b.Block.Size));
            Assert.Equal(info.BlockCount, blocks.Count);
        }

        return (int)counts.Blocksets;
    }
}
