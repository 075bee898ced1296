using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using BlockDb.Bench.Cli;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Bench.Seed;

/// <summary>
/// The <c>seed</c> subcommand (issue 25, item 5: never slower than the naive code): each of seed 000's six workloads
/// run by its naive code on its schema (<see cref="SeedNaive"/>) and by BlockDb's public API on each layout
/// (<see cref="SeedBlockDb"/>), side by side in one process, on the same provider and <c>libe_sqlite3</c>, the same
/// keys (<see cref="SeedData"/>), the same pragmas (Recommended: the seed's values), one transaction per run. Each
/// run is a fresh copy of a template; the sides of a pair run one after another in an order that rotates each round.
/// Prints, per size, workload, provider and layout, BlockDb's speed as a multiple of the seed's (seed time / BlockDb
/// time; above 1 BlockDb is faster): the median over rounds, [min–max], wall and worker-thread CPU.
/// </summary>
internal static class SeedCommand
{
    private const string SeedSide = "seed";

    public static Command Create()
    {
        var sizes = ListParser.ListOption("--sizes", "Pre-filled blocks, e.g. 1e5,1e6 (default both).");
        var providers = ListParser.ListOption("--providers", "MicrosoftData, SystemData, PInvoke (default all three).");
        var layouts = ListParser.ListOption("--layouts", "BlockDb layouts: KeyMap, TextHash, BlobHash (default KeyMap,TextHash).");
        var workloads = ListParser.ListOption("--workloads", "Insert, Select, Xor1, Xor2, Join, NewBlockset (default all six).");
        var ops = new Option<int?>("--ops") { Description = "Blocks per timed run (join: blocks listed, whole blocksets) (default 10,000, the seed's)." };
        var warmup = new Option<int?>("--warmup") { Description = "Blocks of the same workload run untimed first on the same copy (default 1,000)." };
        var rounds = new Option<int?>("--rounds", "-r") { Description = "Rounds; each runs every pair once (default 5)." };
        var jitRounds = new Option<int?>("--jit-rounds") { Description = "Rounds run first and not recorded, so every path is compiled at its final tier before the measured rounds (a run is milliseconds: too short for tiering; one round left a workload run alone below its final tier) (default 5)." };
        var seed = new Option<int?>("--seed") { Description = "Data seed (default 20250708, the seed's)." };
        var work = new Option<DirectoryInfo?>("--work") { Description = "Scratch folder for templates and copies (default $TMPDIR/blockdb-bench/seed)." };
        var only = ListParser.ListOption("--sides", "Run only these sides, e.g. seed or KeyMap (no ratios then; for callgrind: instructions at two --ops, subtracted) (default all).");
        var output = new Option<DirectoryInfo?>("--out", "-o") { Description = "Writes runs.csv and summary.md here." };
        var command = new Command("seed", "Issue 25 item 5: seed 000's six workloads, its naive code on its schema against BlockDb's public API, paired per provider and layout; prints BlockDb's speed as a multiple of the seed's.")
        {
            sizes, providers, layouts, workloads, ops, warmup, rounds, seed, work, only, jitRounds, output,
        };
        command.SetAction(async (result, cancellationToken) =>
        {
            List<int> chosenSizes;
            List<string> chosenProviders;
            List<BlockLayout> chosenLayouts;
            List<SeedWorkload> chosenWorkloads;
            try
            {
                chosenSizes = ListParser.Values(result, sizes)?.Select(t => checked((int)ListParser.Size(t))).Distinct().Order().ToList() ?? [100_000, 1_000_000];
                chosenProviders = ListParser.Values(result, providers)?.Select(ListParser.Provider).Where(p => ProviderCatalog.SqliteNames.Contains(p)).Distinct().ToList() ?? [.. ProviderCatalog.SqliteNames];
                chosenLayouts = ListParser.Values(result, layouts)?.Select(l => ListParser.Enum<BlockLayout>(l, "layout")).Distinct().ToList() ?? [BlockLayout.KeyMap, BlockLayout.TextHash];
                chosenWorkloads = ListParser.Values(result, workloads)?.Select(w => ListParser.Enum<SeedWorkload>(w, "workload")).Distinct().ToList() ?? [.. Enum.GetValues<SeedWorkload>()];
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine(e.Message);
                return 2;
            }

#if DEBUG
            Console.WriteLine("WARNING: this is a Debug build; measure with -c Release.");
#endif
            var settings = new Settings(result.GetValue(ops) ?? 10_000, result.GetValue(warmup) ?? 1_000, result.GetValue(seed) ?? 2025_07_08,
                result.GetValue(work)?.FullName ?? Path.Combine(Path.GetTempPath(), "blockdb-bench", "seed"));
            var n = result.GetValue(rounds) ?? 5;
            var runs = new List<Run>();
            var clock = Stopwatch.StartNew();
            Console.WriteLine($"load average at start: {LoadAverage()}; {Environment.ProcessorCount} cores");
            foreach (var size in chosenSizes)
            {
                var data = new SeedData(size, settings.Seed);
                var templates = await TemplatesAsync(settings, data, size, chosenLayouts);
                var unrecorded = result.GetValue(jitRounds) ?? 5;
                for (var round = -unrecorded; round < n; round++)
                {
                    foreach (var workload in chosenWorkloads)
                    {
                        var inputs = MakeInputs(data, workload, settings, round + unrecorded);
                        foreach (var provider in chosenProviders)
                        {
                            var sides = new List<string> { SeedSide };
                            sides.AddRange(chosenLayouts.Select(l => l.ToString()));
                            if (ListParser.Values(result, only) is { } kept)
                            {
                                sides.RemoveAll(s => !kept.Contains(s, StringComparer.OrdinalIgnoreCase));
                                foreach (var side in sides)
                                {
                                    var (wall, cpu, digest) = side == SeedSide
                                        ? RunSeed(provider, templates[side], settings, workload, inputs)
                                        : await RunBlockDbAsync(provider, Enum.Parse<BlockLayout>(side), templates[side], settings, workload, inputs);
                                    Console.WriteLine($"{Fmt(size)} {workload} {provider} {side}: {wall / 1e6:F1} ms wall, {cpu / 1e6:F1} ms CPU, digest {digest}");
                                }

                                continue;
                            }

                            var offset = (round + (int)workload) % sides.Count;
                            foreach (var side in sides.Skip(offset).Concat(sides.Take(offset)))
                            {
                                cancellationToken.ThrowIfCancellationRequested();
                                var (wall, cpu, digest) = side == SeedSide
                                    ? RunSeed(provider, templates[side], settings, workload, inputs)
                                    : await RunBlockDbAsync(provider, Enum.Parse<BlockLayout>(side), templates[side], settings, workload, inputs);
                                runs.Add(new Run(round, size, workload, provider, side, wall, cpu, digest));
                            }

                            if (round < 0)
                            {
                                runs.RemoveAll(r => r.Round == round);
                                continue;
                            }

                            var pair = runs.Where(r => r.Round == round && r.Size == size && r.Workload == workload && r.Provider == provider).ToList();
                            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                                $"[{clock.Elapsed:mm\\:ss}] round {round + 1}/{n} {Fmt(size)} {workload} {provider}: {string.Join(", ", pair.Where(p => p.Side != SeedSide).Select(p => $"{p.Side} {Ratio(pair, p, wallClock: true):F2}x"))} (load {LoadAverage()})"));
                            foreach (var p in pair.Where(p => p.Side != SeedSide && p.Digest != pair.First(q => q.Side == SeedSide).Digest && workload != SeedWorkload.NewBlockset))
                            {
                                Console.WriteLine($"  WARNING: {p.Side} read digest {p.Digest}, the seed's code {pair.First(q => q.Side == SeedSide).Digest}: not the same rows.");
                            }
                        }
                    }
                }
            }

            var summary = Summary(runs, settings, n, clock.Elapsed);
            Console.WriteLine(summary);
            if (result.GetValue(output) is { } dir)
            {
                Directory.CreateDirectory(dir.FullName);
                await File.WriteAllTextAsync(Path.Combine(dir.FullName, "summary.md"), summary, cancellationToken);
                await File.WriteAllLinesAsync(Path.Combine(dir.FullName, "runs.csv"),
                    ["round,size,workload,provider,side,wall_ns,cpu_ns,digest", .. runs.Select(r => string.Create(CultureInfo.InvariantCulture, $"{r.Round},{r.Size},{r.Workload},{r.Provider},{r.Side},{r.WallNs},{r.CpuNs},{r.Digest}"))],
                    cancellationToken);
            }

            return 0;
        });
        return command;
    }

    private sealed record Settings(int Ops, int Warmup, int Seed, string Work);

    private sealed record Run(int Round, int Size, SeedWorkload Workload, string Provider, string Side, long WallNs, long CpuNs, long Digest);

    private sealed record Inputs(SeedInput Warmup, SeedInput Timed);

    /// <summary>The same warm-up and timed input for every side of a round's pair: new blocks get the IDs both sides give them.</summary>
    private static Inputs MakeInputs(SeedData data, SeedWorkload workload, Settings s, int round)
    {
        var random = new Random(HashCode.Combine(s.Seed, data.Entries.Length, (int)workload, round) & int.MaxValue);
        long nextId = data.Entries.Length + 1;
        SeedInput Make(int ops) => workload switch
        {
            SeedWorkload.Join => new SeedInput([], data.JoinInput(random, ops), []),
            SeedWorkload.Select => new SeedInput(data.Mixed(random, ops, 1, ref nextId), [], []),
            SeedWorkload.Insert => new SeedInput(data.Mixed(random, ops, 0, ref nextId), [], []),
            SeedWorkload.NewBlockset => new SeedInput(data.Mixed(random, ops, 0.5, ref nextId), [], SeedData.Breaks(random, ops)),
            _ => new SeedInput(data.Mixed(random, ops, 0.5, ref nextId), [], []),
        };
        var warm = Make(Math.Max(1, s.Warmup));
        return new Inputs(warm, Make(s.Ops));
    }

    private static (long Wall, long Cpu, long Digest) RunSeed(string provider, string template, Settings s, SeedWorkload workload, Inputs inputs)
    {
        var path = FreshCopy.Create(template, Path.Combine(s.Work, "runs"), "seed.db");
        try
        {
            using (var connection = OpenRaw(provider, path))
            using (var naive = new SeedNaive(connection))
            {
                naive.Run(workload, inputs.Warmup);
                ManagedRunner.GcQuiesce();
                var (wall, cpu) = (Stopwatch.GetTimestamp(), ThreadCpu.NowNs());
                var digest = naive.Run(workload, inputs.Timed);
                return (Ns(Stopwatch.GetTimestamp() - wall), ThreadCpu.NowNs() - cpu, digest);
            }
        }
        finally
        {
            FreshCopy.Delete(path);
        }
    }

    private static async Task<(long Wall, long Cpu, long Digest)> RunBlockDbAsync(string provider, BlockLayout layout, string template, Settings s, SeedWorkload workload, Inputs inputs)
    {
        var path = FreshCopy.Create(template, Path.Combine(s.Work, "runs"), "blockdb.db");
        try
        {
            await using var db = BlockDatabase.Open(Options(provider, path, layout, workload));
            await using var session = await db.OpenSessionAsync();
            await SeedBlockDb.RunAsync(session, workload, inputs.Warmup);
            ManagedRunner.GcQuiesce();
            var (wall, cpu) = (Stopwatch.GetTimestamp(), ThreadCpu.NowNs());
            var run = SeedBlockDb.RunAsync(session, workload, inputs.Timed);
            var digest = run.IsCompletedSuccessfully ? run.Result : await run;
            return (Ns(Stopwatch.GetTimestamp() - wall), ThreadCpu.NowNs() - cpu, digest);
        }
        finally
        {
            FreshCopy.Delete(path);
        }
    }

    private static BlockDbOptions Options(string provider, string path, BlockLayout layout, SeedWorkload workload) => new()
    {
        Provider = provider,
        DataSource = path,
        Pragmas = PragmaSet.Get(PragmaSet.RecommendedName).Create(),
        Batching = new BatchingOptions { CommitEvery = 0, OnDispose = DisposeBehavior.Commit },
        // The seed's Insert (every block new) and Xor2 (insert first) run the strategy that inserts first; the others look
        // first, Duplicati's way. KeyMap has one way.
        SelectXorInsert = workload is SeedWorkload.Insert or SeedWorkload.Xor2 && layout != BlockLayout.KeyMap ? SelectXorInsertStrategy.InsertOrIgnoreThenSelect : SelectXorInsertStrategy.SelectThenInsert,
        Index = new IndexOptions { Layout = layout },
    };

    private static ISqliteConnection OpenRaw(string provider, string path)
    {
        var pragmas = BlockDb.Sqlite.Pragmas.Resolve(PragmaSet.Get(PragmaSet.RecommendedName).Create());
        var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate, pragmas.BusyTimeout ?? 0));
        foreach (var sql in PragmaSql.For(pragmas))
        {
            connection.Execute(sql);
        }

        return connection;
    }

    /// <summary>The seed's file and one BlockDb file per layout for this size, built once (PInvoke) and kept in the work folder.</summary>
    private static async Task<Dictionary<string, string>> TemplatesAsync(Settings s, SeedData data, int size, List<BlockLayout> layouts)
    {
        var folder = Path.Combine(s.Work, string.Create(CultureInfo.InvariantCulture, $"{size}-{s.Seed}"));
        Directory.CreateDirectory(folder);
        var paths = new Dictionary<string, string>();
        var seedPath = Path.Combine(folder, "seed.db");
        if (!File.Exists(seedPath))
        {
            var clock = Stopwatch.StartNew();
            var building = seedPath + ".building";
            FreshCopy.Delete(building);
            using (var connection = OpenRaw("PInvoke", building))
            {
                SeedNaive.Fill(connection, data);
                connection.Execute("PRAGMA wal_checkpoint(TRUNCATE)");
            }

            File.Move(building, seedPath);
            FreshCopy.Delete(building);
            Console.WriteLine($"built the seed's file at {Fmt(size)} in {clock.Elapsed.TotalSeconds:F1} s");
        }

        paths[SeedSide] = seedPath;
        foreach (var layout in layouts)
        {
            var path = Path.Combine(folder, layout + ".db");
            if (!File.Exists(path))
            {
                var clock = Stopwatch.StartNew();
                var building = path + ".building";
                FreshCopy.Delete(building);
                await using (var db = BlockDatabase.Open(Options("PInvoke", building, layout, SeedWorkload.Xor1)))
                await using (var session = await db.OpenSessionAsync())
                {
                    await SeedBlockDb.FillAsync(session, data);
                }

                using (var connection = OpenRaw("PInvoke", building))
                {
                    connection.Execute("PRAGMA wal_checkpoint(TRUNCATE)");
                }

                File.Move(building, path);
                foreach (var sidecar in Directory.GetFiles(folder, Path.GetFileName(building) + "-*"))
                {
                    File.Delete(sidecar); // the KeyMap's map snapshot, named after the file it was built as: rebuilt from a scan when a copy opens
                }

                FreshCopy.Delete(building);
                Console.WriteLine($"built the {layout} file at {Fmt(size)} in {clock.Elapsed.TotalSeconds:F1} s");
            }

            paths[layout.ToString()] = path;
        }

        return paths;
    }

    /// <summary>BlockDb's speed as a multiple of the seed's in one round's pair: seed time / BlockDb time.</summary>
    private static double Ratio(List<Run> pair, Run blockDb, bool wallClock)
    {
        var seed = pair.First(p => p.Side == SeedSide);
        return wallClock ? (double)seed.WallNs / blockDb.WallNs : (double)seed.CpuNs / blockDb.CpuNs;
    }

    private static string Summary(List<Run> runs, Settings s, int rounds, TimeSpan elapsed)
    {
        var text = new StringBuilder();
        text.AppendLine(CultureInfo.InvariantCulture, $"BlockDb's speed as a multiple of the seed's naive code (seed time / BlockDb time, paired per round; median [min–max] of {rounds} rounds; {s.Ops:N0} blocks per run after {s.Warmup:N0} warm-up, one transaction per run; {elapsed.TotalMinutes:F1} min; load average at the end {LoadAverage()}).");
        text.AppendLine();
        text.AppendLine("| size | workload | provider | layout | wall | CPU | seed µs/block (median, wall) |");
        text.AppendLine("|---|---|---|---|---:|---:|---:|");
        foreach (var g in runs.Where(r => r.Side != SeedSide).GroupBy(r => (r.Size, r.Workload, r.Provider, r.Side)).OrderBy(g => g.Key.Size).ThenBy(g => g.Key.Workload))
        {
            var wall = new List<double>();
            var cpu = new List<double>();
            var seedUs = new List<double>();
            foreach (var r in g)
            {
                var pair = runs.Where(p => p.Round == r.Round && p.Size == r.Size && p.Workload == r.Workload && p.Provider == r.Provider).ToList();
                wall.Add(Ratio(pair, r, wallClock: true));
                cpu.Add(Ratio(pair, r, wallClock: false));
                seedUs.Add(pair.First(p => p.Side == SeedSide).WallNs / 1000.0 / s.Ops);
            }

            text.AppendLine(CultureInfo.InvariantCulture, $"| {Fmt(g.Key.Size)} | {g.Key.Workload} | {g.Key.Provider} | {g.Key.Side} | {Band(wall)} | {Band(cpu)} | {Median(seedUs):F2} |");
        }

        return text.ToString();
    }

    private static string Band(List<double> values) =>
        string.Create(CultureInfo.InvariantCulture, $"{(Median(values) < 1 ? "**" : "")}{Median(values):F2}x{(Median(values) < 1 ? "**" : "")} [{values.Min():F2}–{values.Max():F2}]");

    private static double Median(List<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
    }

    private static long Ns(long ticks) => (long)(ticks * (1e9 / Stopwatch.Frequency));

    private static string Fmt(int size) =>
        Math.Abs(Math.Log10(size) % 1) < 1e-9 ? $"1e{Math.Log10(size):F0}" : size.ToString(CultureInfo.InvariantCulture);

    private static string LoadAverage()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));
        }
        catch (IOException)
        {
            return "n/a";
        }
    }
}
