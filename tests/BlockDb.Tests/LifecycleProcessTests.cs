using System.Globalization;
using Xunit.Abstractions;

namespace BlockDb.Tests;

/// <summary>
/// Delete-then-re-add under the KeyMap layout across processes: several processes (and two databases in this one, so
/// three or more key maps) select-xor-insert the same 200 blocks, add a blockset of them, delete it and collect every
/// unreferenced block, over and over, each process killed with SIGKILL at the end. A deleted block must never be
/// returned as found with another block's content, a re-added block must get one row, and the file must check clean.
/// </summary>
public sealed class LifecycleProcessTests(ITestOutputHelper output) : IDisposable
{
    private static readonly TimeSpan Duration = TimeSpan.FromSeconds(6);
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static TheoryData<string> Providers() => [.. BlockDbProviders.Names];

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Processes_that_delete_collect_and_readd_the_same_blocks_never_duplicate_nor_confuse_them(string provider)
    {
        var path = _folder.File("churn.db");
        var options = new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = BlockLayout.KeyMap }, Batching = { CommitEvery = 0 }, Pragmas = { BusyTimeout = 5000 } };
        await using (BlockDatabase.Open(options))
        {
            // Created once, before the processes race for it.
        }

        var children = Enumerable.Range(0, 3)
            .Select(i => new ChildProcess("churn", path, BlockDbProviders.Names[i % BlockDbProviders.Names.Count], i.ToString(CultureInfo.InvariantCulture)))
            .ToList();
        var wrong = new List<string>();
        var rounds = 0;
        try
        {
            await Task.WhenAll(children.Select(c => c.Ready.WaitAsync(TimeSpan.FromSeconds(60))));
            await using var a = BlockDatabase.Open(options);
            await using var b = BlockDatabase.Open(options);
            var until = DateTime.UtcNow + Duration;
            await Task.WhenAll(new[] { a, b }.Select((db, i) => Task.Run(async () =>
            {
                await using var session = await db.OpenSessionAsync();
                var random = new Random(100 + i);
                while (DateTime.UtcNow < until)
                {
                    try
                    {
                        await Churn.RoundAsync(session, random, line =>
                        {
                            lock (wrong)
                            {
                                wrong.Add(line);
                            }
                        });
                        Interlocked.Increment(ref rounds);
                    }
                    catch (BlockDbException e) when (e.IsTransient || e is BlockDbBatchRolledBackException or BlockNotFoundException)
                    {
                        await session.RollbackAsync();
                    }
                }
            })));
        }
        finally
        {
            foreach (var child in children)
            {
                child.Kill();
            }
        }

        var childLines = children.SelectMany(c => c.Lines).ToList();
        wrong.AddRange(childLines.Where(l => l.StartsWith("WRONG", StringComparison.Ordinal) || l.StartsWith("stderr", StringComparison.Ordinal)));
        var childRounds = childLines.Count(l => l.StartsWith("ROUND", StringComparison.Ordinal));
        foreach (var child in children)
        {
            child.Dispose();
        }

        await using var checkDb = BlockDatabase.Open(options);
        var check = await checkDb.CheckAsync();
        output.WriteLine($"{provider}: {rounds} rounds in this process, {childRounds} in 3 child processes; final file {check.Counts}, {check.DuplicateGroups} duplicate groups.");
        Assert.Empty(wrong);
        Assert.True(check.IsClean, check.ToString());
        Assert.True(rounds > 0 && childRounds > 0, $"too little work: {rounds} and {childRounds} rounds");

        // Every block once more, through a fresh map: one row each, at the ID the file holds.
        await using var session = await checkDb.OpenSessionAsync();
        for (var k = 0; k < Churn.Keys; k++)
        {
            var first = await session.SelectXorInsertAsync(Churn.Hash(k), 10);
            Assert.Equal(first.Id, (await session.SelectXorInsertAsync(Churn.Hash(k), 10)).Id);
        }

        await session.CommitAsync();
        Assert.Equal(Churn.Keys, (await session.GetCountsAsync()).Blocks);
    }
}
