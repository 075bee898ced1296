using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using BlockDb.Bench.Cli;
using BlockDb.Layouts;
using BlockDb.Opening;

namespace BlockDb.Bench.Blocksets;

/// <summary>
/// The <c>blocksets</c> subcommand (issue 21, defect 6): blocksets added one after another over blocks the file already
/// holds, each timed on its own, so a cost that grows with the file shows as a rising series. Two series, as the issue
/// measured them: blocksets of 200,000 entries over 200,000 existing blocks (each block once), and blocksets of
/// 400,000 entries over 1,000 existing blocks (each block 400 times). Also SQLite's own heap high-water mark during
/// each blockset (<c>sqlite3_status64</c>, the process's SQLite: one configuration runs at a time), where a statement
/// journal held in memory shows.
/// </summary>
internal static class BlocksetGrowthCommand
{
    private const int SqliteStatusMemoryUsed = 0;

    public static Command Create()
    {
        var providers = ListParser.ListOption("--providers", "MicrosoftData, SystemData, PInvoke, PostgreSql (comma-separated or repeated; default the three SQLite ones; PostgreSql stores BlobHash and needs --connection).");
        var connection = new Option<string?>("--connection") { Description = "Npgsql connection string for PostgreSql (default $BLOCKDB_TEST_POSTGRES); each run gets a schema of its own." };
        var layouts = ListParser.ListOption("--layouts", "TextHash, BlobHash, KeyMap (default all).");
        var series = ListParser.ListOption("--series", "existing (200,000 entries over 200,000 blocks), repeated (400,000 entries over 1,000 blocks) (default both).");
        var rounds = new Option<int?>("--rounds") { Description = "Blocksets per series, each timed (default 4)." };
        var scale = new Option<double?>("--scale") { Description = "Multiplies every series' entries and blocks (default 1; 0.05 for a smoke run)." };
        var wal = new Option<bool>("--wal") { Description = "SQLite: checkpoint the WAL away (TRUNCATE) before each blockset and report the WAL it wrote (MiB) and ms per MiB written, so a cost that follows the pages a blockset changes shows apart from one that follows the file." };
        var command = new Command("blocksets", "Issue 21 defect 6: the cost of each new blockset over existing blocks as the file grows, per provider and layout (ms per blockset, us per entry, SQLite heap high-water).")
        {
            providers, layouts, series, rounds, scale, connection, wal,
        };
        command.SetAction(async (result, cancellationToken) =>
        {
            var chosenProviders = ListParser.Values(result, providers)?.Select(p => p.Equals(ProviderCatalog.PostgreSql, StringComparison.OrdinalIgnoreCase) ? ProviderCatalog.PostgreSql : ListParser.Provider(p)).Distinct().ToList()
                ?? [.. ProviderCatalog.SqliteNames];
            var admin = result.GetValue(connection) ?? Environment.GetEnvironmentVariable("BLOCKDB_TEST_POSTGRES");
            if (chosenProviders.Contains(ProviderCatalog.PostgreSql) && admin is null)
            {
                Console.Error.WriteLine("PostgreSql needs --connection (or BLOCKDB_TEST_POSTGRES).");
                return 2;
            }

            var chosenLayouts = ListParser.Values(result, layouts)?.Select(l => ListParser.Enum<BlockLayout>(l, "layout")).Distinct().ToList() ?? [.. LayoutCatalog.Created];
            var chosenSeries = ListParser.Values(result, series)?.Select(s => s.ToLowerInvariant()).ToList() ?? ["existing", "repeated"];
            var factor = result.GetValue(scale) ?? 1;
            if (chosenSeries.Any(s => s is not ("existing" or "repeated")))
            {
                Console.Error.WriteLine("--series takes existing and repeated.");
                return 2;
            }

#if DEBUG
            Console.WriteLine("WARNING: this is a Debug build; measure with -c Release.");
#endif
            var n = result.GetValue(rounds) ?? 4;
            var measureWal = result.GetValue(wal);
            Console.WriteLine($"| series | provider | layout | {string.Join(" | ", Enumerable.Range(1, n).Select(r => $"#{r} ms"))} | last/first | us/entry (last) | SQLite heap high-water per blockset, MiB |{(measureWal ? " WAL written per blockset, MiB | ms per WAL MiB |" : "")}");
            Console.WriteLine($"|---|---|---|{string.Concat(Enumerable.Repeat("---:|", n))}---:|---:|---|{(measureWal ? "---|---|" : "")}");
            foreach (var name in chosenSeries)
            {
                var (blocks, entries) = name == "existing" ? (200_000, 200_000) : (1_000, 400_000);
                (blocks, entries) = ((int)Math.Max(1, blocks * factor), (int)Math.Max(1, entries * factor));
                foreach (var provider in chosenProviders)
                {
                    foreach (var layout in provider == ProviderCatalog.PostgreSql ? [BlockLayout.BlobHash] : chosenLayouts)
                    {
                        var sqliteWal = measureWal && provider != ProviderCatalog.PostgreSql;
                        var (ms, heap, written) = await RunAsync(provider, layout, admin, blocks, entries, n, sqliteWal, cancellationToken);
                        var walColumns = sqliteWal
                            ? $" {Join(written.Select(w => w / 1048576.0), "F1")} | {Join(ms.Zip(written, (m, w) => m / (w / 1048576.0)), "F0")} |"
                            : measureWal ? " | |" : "";
                        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                            $"| {entries:N0} over {blocks:N0} | {provider} | {layout} | {string.Join(" | ", ms.Select(m => m.ToString("N0", CultureInfo.InvariantCulture)))} | {ms[^1] / ms[0]:F2} | {ms[^1] * 1000 / entries:F2} | {Join(heap.Select(h => h / 1048576.0), "F1")} |{walColumns}"));
                    }
                }
            }

            return 0;
        });
        return command;
    }

    /// <summary>A fresh file (or server schema) of <paramref name="blocks"/> blocks, then <paramref name="rounds"/> blocksets of <paramref name="entries"/> entries cycling over them, each committed and timed.</summary>
    private static async Task<(double[] Ms, long[] Heap, long[] Wal)> RunAsync(string provider, BlockLayout layout, string? admin, int blocks, int entries, int rounds, bool measureWal, CancellationToken cancellationToken)
    {
        var folder = Path.Combine(Path.GetTempPath(), "blockdb-bench", "blocksets-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(folder);
        using var schema = provider == ProviderCatalog.PostgreSql ? new Server.BenchSchema(admin!) : null;
        try
        {
            var options = schema is null
                ? new BlockDbOptions { Provider = provider, DataSource = Path.Combine(folder, "index.db"), Index = { Layout = layout } }
                : new BlockDbOptions { Provider = provider, ConnectionString = schema.ConnectionString, Index = { Layout = layout } };
            await using var db = BlockDatabase.Open(options);
            await using var session = await db.OpenSessionAsync(cancellationToken);
            var keys = Enumerable.Range(0, blocks).Select(i => new BlockKey(new BlockHash(System.Security.Cryptography.SHA256.HashData(BitConverter.GetBytes(i))), 4096)).ToArray();
            var found = new SelectXorInsertResult[blocks];
            await session.SelectXorInsertManyAsync(keys, found, null, cancellationToken);
            await session.CommitAsync(cancellationToken);
            var fileKeys = Enumerable.Range(0, entries).Select(i => keys[i % blocks]).ToArray();
            var results = new SelectXorInsertResult[entries];
            var (ms, heap, written) = (new double[rounds], new long[rounds], new long[rounds]);
            var path = Path.Combine(folder, "index.db");
            for (var r = 0; r < rounds; r++)
            {
                if (measureWal)
                {
                    using var raw = ProviderCatalog.SqliteDriver("PInvoke").Open(new Drivers.SqliteOpenOptions(path, Drivers.SqliteOpenMode.ReadWrite, 5000));
                    raw.Execute("PRAGMA wal_checkpoint(TRUNCATE)");
                }

                var before = HeapHighWater(reset: true);
                var clock = Stopwatch.StartNew();
                _ = await session.AddBlocksetAsync(fileKeys, results, default, null, cancellationToken);
                await session.CommitAsync(cancellationToken);
                ms[r] = clock.Elapsed.TotalMilliseconds;
                heap[r] = HeapHighWater(reset: false) - before;
                written[r] = measureWal ? new FileInfo(path + "-wal").Length : 0;
            }

            return (ms, heap, written);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    private static string Join(IEnumerable<double> values, string format) =>
        string.Join(", ", values.Select(v => v.ToString(format, CultureInfo.InvariantCulture)));

    /// <summary>SQLite's heap high-water mark (bytes) since the last reset; with <paramref name="reset"/>, the current use, and the mark starts again from it.</summary>
    private static long HeapHighWater(bool reset)
    {
        _ = sqlite3_status64(SqliteStatusMemoryUsed, out var current, out var highWater, reset ? 1 : 0);
        return reset ? current : highWater;
    }

    [DllImport("e_sqlite3", CallingConvention = CallingConvention.Cdecl)]
    private static extern int sqlite3_status64(int op, out long current, out long highWater, int resetFlag);


}
