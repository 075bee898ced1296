using System.Collections.Concurrent;
using System.Globalization;
using Xunit.Abstractions;

namespace BlockDb.Tests.Durability;

/// <summary>
/// Writer processes SIGKILLed in the middle of their batches and restarted, while this process keeps writing the same
/// blocks: the file checks clean, holds no duplicate, and every acknowledged block is at its ID.
/// </summary>
public sealed class KilledWriterProcessTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    /// <summary>
    /// Two writer processes (plain sessions, batches of up to 60) SIGKILLed mid-batch and restarted, while this process
    /// keeps writing the same blocks through two databases: no duplicate, every acknowledged block at its ID.
    /// </summary>
    [Theory]
    [InlineData("session-wal")]
    [InlineData("session-delete")]
    public async Task Writer_processes_killed_mid_batch_while_others_keep_writing_leave_no_duplicate_and_lose_no_acknowledged_block(string mode)
    {
        var path = Folder.File($"{mode}.db");
        var preset = mode == "session-wal" ? PragmaPreset.Recommended : PragmaPreset.SqliteDefaults;
        void Configure(BlockDbOptions o)
        {
            o.Batching.CommitEvery = 0;
            o.Pragmas.Preset = preset;
            o.Pragmas.BusyTimeout = 5000;
        }

        await using (var create = Open($"{mode}.db", Configure))
        {
        }

        var acked = new ConcurrentBag<(int Key, long Id)>();
        var stop = DateTime.UtcNow.AddSeconds(8);
        using var killing = new CancellationTokenSource(); // the writers here go on until the kills are done
        var failures = new ConcurrentQueue<string>();
        var local = Enumerable.Range(0, 2).Select(t => Task.Run(async () =>
        {
            var rng = new Random(100 + t);
            await using var db = Open($"{mode}.db", Configure, t == 0 ? "PInvoke" : "MicrosoftData");
            await using var session = await db.OpenSessionAsync();
            var pending = new List<(int, long)>();
            while (!killing.IsCancellationRequested)
            {
                await Task.Yield(); // calls complete synchronously: let other tasks (and timers) run on the two cores
                try
                {
                    var k = rng.Next(3000);
                    pending.Add((k, (await session.SelectXorInsertAsync(TestData.Block(k, 10))).Id));
                    if (pending.Count >= rng.Next(1, 30))
                    {
                        await session.CommitAsync();
                        pending.ForEach(acked.Add);
                        pending.Clear();
                    }
                }
                catch (BlockDbException e) when (e.IsTransient || e is BlockDbBatchRolledBackException || e.SqliteErrorCode == SqliteResultCode.IOError)
                {
                    pending.Clear();
                    await session.RollbackAsync();
                }
                catch (Exception e)
                {
                    failures.Enqueue(e.ToString());
                    return;
                }
            }

            await session.CommitAsync();
            pending.ForEach(acked.Add);
        })).ToArray();

        var kills = 0;
        var rng = new Random(7);
        // At least two cycles (four kills) however slow the machine, and as many as fit in the time.
        for (var cycle = 0; cycle < 2 || DateTime.UtcNow < stop.AddSeconds(-1); cycle++)
        {
            using var one = new ChildProcess(mode, path, cycle % 2 == 0 ? "PInvoke" : "SystemData", (2 * cycle).ToString(CultureInfo.InvariantCulture));
            using var two = new ChildProcess(mode, path, "PInvoke", ((2 * cycle) + 1).ToString(CultureInfo.InvariantCulture));
            await Task.WhenAll(one.Ready, two.Ready).WaitAsync(TimeSpan.FromSeconds(60));
            await Task.Delay(rng.Next(200, 900));
            one.Kill();
            await Task.Delay(rng.Next(0, 100));
            two.Kill();
            kills += 2;
            foreach (var child in new[] { one, two })
            {
                foreach (var line in child.Lines)
                {
                    if (line.StartsWith("ACKB ", StringComparison.Ordinal))
                    {
                        var parts = line.Split(' ');
                        acked.Add((int.Parse(parts[1], CultureInfo.InvariantCulture), long.Parse(parts[2], CultureInfo.InvariantCulture)));
                    }
                    else if (line.StartsWith("stderr:", StringComparison.Ordinal))
                    {
                        failures.Enqueue(line);
                    }
                }
            }
        }

        await killing.CancelAsync();
        await Task.WhenAll(local).WaitAsync(Hang);
        Assert.Empty(failures);
        Assert.True(kills >= 4 && acked.Count > 100, $"{kills} kills, {acked.Count} acknowledged blocks");
        using var raw = new RawSql(path);
        Assert.Equal("ok", raw.Text("PRAGMA integrity_check"));
        Assert.Equal(0, raw.DuplicateGroups());
        var rows = raw.Blocks().ToDictionary(r => r.Id);
        Assert.All(acked, a => Assert.True(rows.TryGetValue(a.Id, out var row) && row.Hash == TestData.Hash(a.Key), $"acknowledged block {a.Key} at {a.Id} is not there"));
        await using var check = Open($"{mode}.db", Configure);
        var result = await check.CheckAsync();
        Assert.True(result.IsClean, result.ToString());
    }
}
