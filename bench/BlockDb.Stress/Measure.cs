using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using BlockDb.Opening;

namespace BlockDb.Stress;

/// <summary>
/// <c>measure</c>: the issue-10 figures that are measurements, not test assertions, printed side by side from one
/// run: the key map's first load per provider, lookups among hashes that share a long prefix against ordinary
/// ones, opening beside a writer that holds an open batch, and many processes first-opening one new file at once.
/// </summary>
internal static class Measure
{
    private const string Reference = "PInvoke";

    public static async Task<int> RunAsync(int blocks, int repetitions)
    {
        var folder = Path.Combine(Path.GetTempPath(), "blockdb-measure", Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(folder);
        try
        {
            await MapLoadAsync(folder, blocks, repetitions);
            await PrefixLookupsAsync(folder, repetitions);
            await OpenBesideWriterAsync(folder);
            await ConcurrentFirstOpensAsync(folder);
            return 0;
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    /// <summary>The first FindBlockAsync after opening loads the whole map: its time per provider, repetitions interleaved.</summary>
    private static async Task MapLoadAsync(string folder, int blocks, int repetitions)
    {
        var path = Path.Combine(folder, "load.db");
        await FillAsync(path, blocks, i => Hash(i));
        var times = ProviderCatalog.SqliteNames.ToDictionary(p => p, _ => new List<double>());
        for (var r = 0; r < repetitions; r++)
        {
            foreach (var provider in ProviderCatalog.SqliteNames)
            {
                await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
                await using var session = await db.OpenSessionAsync();
                var clock = Stopwatch.StartNew();
                var found = await session.FindBlockAsync(BlockKey.Parse(Hash(blocks / 2), 4096));
                times[provider].Add(clock.Elapsed.TotalMilliseconds);
                if (found != (blocks / 2) + 1)
                {
                    throw new InvalidOperationException($"{provider} found {found} for block {blocks / 2}.");
                }
            }
        }

        Console.WriteLine($"Key map first load, {blocks:N0} blocks, median of {repetitions} (interleaved):");
        var reference = Median(times[Reference]);
        foreach (var (provider, list) in times)
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {provider,-14} {Median(list),9:F0} ms  ({Median(list) / reference:F2}x {Reference}; min {list.Min():F0}, max {list.Max():F0})"));
        }
    }

    /// <summary>Lookups among 10,000 hashes sharing their first 24 bytes, against 10,000 ordinary hashes.</summary>
    private static async Task PrefixLookupsAsync(string folder, int repetitions)
    {
        const int Count = 10_000;
        const int Lookups = 100_000;
        var prefix = SHA256.HashData("shared prefix"u8);
        string Shared(int i)
        {
            var bytes = (byte[])prefix.Clone();
            BitConverter.GetBytes(i).CopyTo(bytes, 28);
            return Convert.ToBase64String(bytes);
        }

        var ordinaryPath = Path.Combine(folder, "ordinary.db");
        var sharedPath = Path.Combine(folder, "shared.db");
        await FillAsync(ordinaryPath, Count, i => Hash(i));
        await FillAsync(sharedPath, Count, Shared);
        var ordinary = new List<double>();
        var shared = new List<double>();
        for (var r = 0; r < repetitions; r++)
        {
            ordinary.Add(await TimeLookupsAsync(ordinaryPath, Count, Lookups, i => Hash(i)));
            shared.Add(await TimeLookupsAsync(sharedPath, Count, Lookups, Shared));
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Lookup of an existing block among {Count:N0} ({Reference}, KeyMap, {Lookups:N0} lookups, median of {repetitions}): ordinary hashes {Median(ordinary):F2} µs, hashes sharing their first 28 bytes {Median(shared):F2} µs ({Median(shared) / Median(ordinary):F2}x)"));
    }

    private static async Task<double> TimeLookupsAsync(string path, int count, int lookups, Func<int, string> hash)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = Reference, DataSource = path });
        await using var session = await db.OpenSessionAsync();
        var keys = Enumerable.Range(0, lookups).Select(i => hash(i * 7919 % count)).ToArray();
        await session.FindBlockAsync(BlockKey.Parse(keys[0], 4096)); // loads the map
        var clock = Stopwatch.StartNew();
        foreach (var key in keys)
        {
            if (await session.FindBlockAsync(BlockKey.Parse(key, 4096)) is null)
            {
                throw new InvalidOperationException("A block that exists was not found.");
            }
        }

        return clock.Elapsed.TotalMicroseconds / lookups;
    }

    /// <summary>Open, session and first lookup while another database's session holds an open batch (the write lock).</summary>
    private static async Task OpenBesideWriterAsync(string folder)
    {
        var path = Path.Combine(folder, "beside.db");
        await FillAsync(path, 100_000, i => Hash(i));
        await using var writerDb = BlockDatabase.Open(new BlockDbOptions { Provider = Reference, DataSource = path, Batching = { CommitEvery = 0 } });
        await using var writer = await writerDb.OpenSessionAsync();
        await writer.SelectXorInsertAsync(BlockKey.Parse(Hash(-1), 4096));
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            var times = new List<double>();
            for (var r = 0; r < 10; r++)
            {
                var clock = Stopwatch.StartNew();
                await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Pragmas = { BusyTimeout = 10_000 } });
                times.Add(clock.Elapsed.TotalMilliseconds);
            }

            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"Open beside a writer holding an open batch ({provider}, 10 opens): median {Median(times):F1} ms, max {times.Max():F1} ms"));
        }

        await writer.RollbackAsync();
    }

    /// <summary>Eight processes first-open one new file at the same moment, ten rounds.</summary>
    private static async Task ConcurrentFirstOpensAsync(string folder)
    {
        const int Processes = 8;
        const int Rounds = 10;
        var failures = new List<string>();
        for (var round = 0; round < Rounds; round++)
        {
            var path = Path.Combine(folder, $"first-{round}.db");
            var startAt = DateTime.UtcNow.AddMilliseconds(1500).Ticks;
            var children = Enumerable.Range(0, Processes).Select(p =>
            {
                var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
                foreach (var arg in new[] { typeof(Measure).Assembly.Location, "open", path, ProviderCatalog.SqliteNames[(round + p) % ProviderCatalog.SqliteNames.Count], startAt.ToString(CultureInfo.InvariantCulture) })
                {
                    start.ArgumentList.Add(arg);
                }

                return Process.Start(start)!;
            }).ToList();
            foreach (var child in children)
            {
                var output = await child.StandardOutput.ReadToEndAsync() + await child.StandardError.ReadToEndAsync();
                await child.WaitForExitAsync();
                if (child.ExitCode != 0)
                {
                    failures.Add($"round {round}: {output.Trim()}");
                }
            }
        }

        Console.WriteLine($"Concurrent first opens of one new file: {Processes} processes x {Rounds} rounds, providers in rotation: {failures.Count} failed");
        foreach (var failure in failures.Take(5))
        {
            Console.WriteLine("  " + failure);
        }
    }

    /// <summary>The <c>open</c> role: waits for the common start time, then opens the file once (exit 1 on failure).</summary>
    public static async Task<int> OpenOnceAsync(string path, string provider, long startAtTicks)
    {
        var wait = new DateTime(startAtTicks, DateTimeKind.Utc) - DateTime.UtcNow;
        if (wait > TimeSpan.Zero)
        {
            Thread.Sleep(wait);
        }

        try
        {
            await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
            await using var session = await db.OpenSessionAsync();
            await session.FindBlockAsync(BlockKey.Parse(Hash(1), 4096));
            return 0;
        }
        catch (BlockDbException e)
        {
            Console.WriteLine($"{provider}: {e.GetType().Name} {e.SqliteErrorCode}/{e.SqliteExtendedErrorCode}: {e.Message}");
            return 1;
        }
    }

    private static async Task FillAsync(string path, int count, Func<int, string> hash)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = Reference, DataSource = path, Batching = { CommitEvery = 100_000 } });
        await using var session = await db.OpenSessionAsync();
        for (var i = 0; i < count; i++)
        {
            await session.SelectXorInsertAsync(BlockKey.Parse(hash(i), 4096));
        }

        await session.CommitAsync();
    }

    private static string Hash(int i) => Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(i)));

    private static double Median(List<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted[sorted.Count / 2];
    }
}
