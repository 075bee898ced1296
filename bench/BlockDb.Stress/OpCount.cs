using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;

namespace BlockDb.Stress;

/// <summary>
/// <c>fill</c> and <c>ops</c>: a fixed number of hot-path calls on a KeyMap file (or another layout's, when given), for instruction counts per call
/// under <c>valgrind --tool=callgrind</c> (bench/callgrind-ops.sh runs two counts and divides the difference, so
/// start-up, the map's load and the keys' set-up cancel out). Nothing here is timed for a result.
/// </summary>
internal static class OpCount
{
    /// <summary>How many keys <c>ops</c> computes before its loop, whatever the count (so both runs do the same set-up).</summary>
    private const int Pool = 200_000;

    /// <summary>Fills <paramref name="path"/> with blocks 0 … <paramref name="blocks"/> − 1 (KeyMap unless <paramref name="layout"/> says otherwise; the map's snapshot is written at dispose).</summary>
    public static async Task<int> FillAsync(string provider, string path, int blocks, BlockLayout layout = BlockLayout.KeyMap)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = layout }, Batching = { CommitEvery = 100_000 } });
        await using var session = await db.OpenSessionAsync();
        for (var i = 0; i < blocks; i++)
        {
            await session.SelectXorInsertAsync(Hash(i), 4096);
        }

        await session.CommitAsync();
        await session.FindBlockAsync(Hash(0), 4096); // the map is loaded, so the dispose writes its snapshot
        Console.WriteLine($"filled {path} with {blocks:N0} blocks ({provider})");
        return 0;
    }

    /// <summary>
    /// Opens <paramref name="path"/> (filled with <paramref name="blocks"/> blocks) with default options, loads the map,
    /// then runs <paramref name="count"/> calls of <paramref name="operation"/>: <c>find</c> (FindBlockAsync of existing
    /// blocks), <c>sxi</c> (SelectXorInsertAsync, every other block new), <c>sxi-hit</c> (SelectXorInsertAsync of existing
    /// blocks). Commits and exits without disposing, so no snapshot is written (its size would depend on the count).
    /// </summary>
    public static async Task<int> RunAsync(string provider, string path, int blocks, string operation, int count, BlockLayout layout = BlockLayout.KeyMap)
    {
        if (count > Pool)
        {
            throw new ArgumentOutOfRangeException(nameof(count), count, $"At most {Pool:N0} calls.");
        }

        var keys = new string[Pool];
        for (var i = 0; i < Pool; i++)
        {
            var existing = (int)((long)i * 7919 % blocks);
            keys[i] = operation == "sxi" && i % 2 == 1 ? Hash(blocks + i) : Hash(existing);
        }

        var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = layout } });
        var session = await db.OpenSessionAsync();
        await session.FindBlockAsync(Hash(0), 4096); // loads the map
        var clock = Stopwatch.StartNew();
        var allocated = GC.GetAllocatedBytesForCurrentThread();
        long sum = 0;
        switch (operation)
        {
            case "find":
                for (var i = 0; i < count; i++)
                {
                    sum += await session.FindBlockAsync(keys[i], 4096) ?? throw new InvalidOperationException($"Block {i} was not found.");
                }

                break;
            case "sxi":
            case "sxi-hit":
                for (var i = 0; i < count; i++)
                {
                    var result = await session.SelectXorInsertAsync(keys[i], 4096);
                    sum += result.Id + (result.Created ? 1 : 0);
                }

                break;
            default:
                throw new ArgumentException($"Unknown operation '{operation}'; use find, sxi or sxi-hit.", nameof(operation));
        }

        // The calls complete synchronously on SQLite, so the loop stays on this thread and its allocations are counted here.
        allocated = GC.GetAllocatedBytesForCurrentThread() - allocated;
        if (operation != "find")
        {
            await session.CommitAsync();
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{provider} {operation} x {count:N0} on {blocks:N0} blocks: {clock.Elapsed.TotalMicroseconds / Math.Max(count, 1):F2} us/call (not a result), {(double)allocated / Math.Max(count, 1):F1} B allocated/call, checksum {sum}"));
        Console.Out.Flush();
        GC.KeepAlive(db);
        Environment.Exit(0);
        return 0;
    }

    private static string Hash(int i) => Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(i)));
}
