using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Cli;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;
using BlockDb.Opening;

namespace BlockDb.Bench.Recreate;

/// <summary>
/// The <c>recreate</c> subcommand (issue 25 item 2): a rebuild of blocks and blocksets together from a Duplicati-like
/// stream (<see cref="RecreateStream"/>), by BlockDb's public API per provider and layout beside the plain C loop on the
/// same template, stream file and <c>libe_sqlite3</c>, rounds interleaved; blocks/s, blocksets/s and each run's ratio to
/// the C run of its round, on wall and thread-CPU time (<see cref="RecreateReport"/>).
/// </summary>
internal static class RecreateCommand
{
    private const int WarmupBlocks = 20_000;

    public static Command Create()
    {
        var blocks = new Option<string?>("--blocks") { Description = "New blocks in the stream (default 1e6; up to 5e7). Files are drawn until the stream holds them; 20 % of file blocks repeat an earlier block." };
        var rounds = new Option<int?>("--rounds", "-r") { Description = "Rounds: each runs every side once per layout, the order rotated by one each round (default 3)." };
        var providers = ListParser.ListOption("--providers", "MicrosoftData, SystemData, PInvoke (default all three). The C loop always runs.");
        var layouts = ListParser.ListOption("--layouts", "KeyMap, TextHash (default both).");
        var batch = new Option<int?>("--batch") { Description = "Items per transaction on both sides (default 100,000, ImportOptions' default)." };
        var smoke = new Option<bool>("--smoke") { Description = "Seconds (CI): 3,000 blocks, one round; exits 1 when a run fails or differs from the oracle." };
        var seed = new Option<int?>("--seed") { Description = "Data seed (default 42)." };
        var work = new Option<DirectoryInfo?>("--work") { Description = "Scratch folder (default $TMPDIR/blockdb-bench/recreate)." };
        var blocksOnly = new Option<bool>("--blocks-only") { Description = "Import the blocks only, on every side (the blockset phase's cost is a full run's minus this one's: callgrind, bench/callgrind-recreate.sh)." };
        var output = new Option<DirectoryInfo?>("--out", "-o") { Description = "Output folder for recreate.md and runs.csv (default bench/results/<timestamp>-recreate)." };
        var command = new Command("recreate", "A rebuild of blocks and blocksets from a Duplicati-like stream (volume index files, then file lists): ImportBlocksAsync + ImportBlocksetsAsync per provider and layout beside the plain C loop on the same template and stream file; blocks/s, blocksets/s, ratio to C per round (wall and thread CPU), the load beside each run.")
        {
            blocks, rounds, providers, layouts, batch, smoke, seed, work, output, blocksOnly,
        };
        command.SetAction(result =>
        {
            RecreateSettings s;
            try
            {
                var isSmoke = result.GetValue(smoke);
                var size = result.GetValue(blocks) is { } b ? ListParser.Size(b) : isSmoke ? 3_000 : 1_000_000;
                s = new RecreateSettings(
                    size is < 1 or > 50_000_000 ? throw new ArgumentException("--blocks is 1 to 5e7.") : (int)size,
                    result.GetValue(rounds) ?? (isSmoke ? 1 : 3),
                    ListParser.Values(result, providers)?.Select(ListParser.Provider).Distinct().ToList() ?? [.. ProviderCatalog.SqliteNames],
                    ListParser.Values(result, layouts)?.Select(l => ListParser.Enum<BlockLayout>(l, "layout")).Distinct().ToList() ?? [BlockLayout.KeyMap, BlockLayout.TextHash],
                    result.GetValue(batch) ?? new ImportOptions().ItemsPerTransaction,
                    result.GetValue(seed) ?? 42,
                    result.GetValue(work)?.FullName ?? Path.Combine(Path.GetTempPath(), "blockdb-bench", "recreate"),
                    result.GetValue(output)?.FullName ?? BenchCommand.DefaultOut("recreate"),
                    result.GetValue(blocksOnly));
                if (s.Rounds < 1 || s.Batch is < 1 or > ImportOptions.MaxItemsPerTransaction || s.Providers.Any(RunSpec.IsNativeName)
                    || s.Layouts.Any(l => l is not (BlockLayout.KeyMap or BlockLayout.TextHash)))
                {
                    throw new ArgumentException($"--rounds is at least 1, --batch 1 to {ImportOptions.MaxItemsPerTransaction:N0}, --providers MicrosoftData, SystemData, PInvoke, --layouts KeyMap, TextHash.");
                }
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine(e.Message);
                return 2;
            }

            return RunAsync(s).GetAwaiter().GetResult();
        });
        return command;
    }

    private static async Task<int> RunAsync(RecreateSettings s)
    {
        Directory.CreateDirectory(s.WorkDir);
        Directory.CreateDirectory(s.OutDir);
        var clock = Stopwatch.StartNew();
        var started = DateTimeOffset.UtcNow;
        var streamPath = RecreateStream.Ensure(s.WorkDir, s.Blocks, s.Seed);
        var stream = RecreateStream.Read(streamPath);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"bench recreate: {stream.Blocks:N0} blocks in {stream.Volumes:N0} volumes, {stream.Files:N0} files, {stream.Refs.Length:N0} entries ({streamPath}, read in {clock.Elapsed.TotalSeconds:F1} s); {s.Batch:N0} items per transaction; {s.Rounds} round(s)."));
        var runs = new RecreateRuns(stream, streamPath, s.WorkDir, s.Batch, s.BlocksOnly);
        var native = NativeBuild.Create(s.WorkDir, Console.WriteLine);
        var templates = new Dictionary<BlockLayout, string>();
        foreach (var layout in s.Layouts)
        {
            templates[layout] = await runs.TemplateAsync(layout);
        }

        if (s.Blocks > WarmupBlocks)
        {
            // JIT warm-up: every provider and layout once on a small stream, untimed, so no measured run pays tier-0 code.
            var small = RecreateStream.Ensure(s.WorkDir, WarmupBlocks, s.Seed);
            var warm = new RecreateRuns(RecreateStream.Read(small), small, s.WorkDir, s.Batch);
            foreach (var layout in s.Layouts)
            {
                var template = await warm.TemplateAsync(layout);
                foreach (var provider in s.Providers)
                {
                    for (var i = 0; i < 3; i++)
                    {
                        var run = await warm.DotNetAsync(provider, layout, 0, template);
                        if (run.Error is not null)
                        {
                            Console.WriteLine($"warm-up {layout} {provider} FAILED: {run.Error}");
                            return 1;
                        }
                    }
                }
            }
        }

        var results = new List<RecreateRun>();
        List<string> sides = [RecreateRuns.C, .. s.Providers];
        for (var round = 1; round <= s.Rounds; round++)
        {
            foreach (var layout in s.Layouts)
            {
                var shift = (round - 1) % sides.Count;
                foreach (var side in sides.Skip(shift).Concat(sides.Take(shift)))
                {
                    var run = side == RecreateRuns.C
                        ? runs.Native(native, layout, round, templates[layout])
                        : await runs.DotNetAsync(side, layout, round, templates[layout]);
                    results.Add(run);
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"round {round} {layout,-8} {side,-13} blocks {run.BlocksPerSecond(stream.Blocks),12:N0}/s ({run.BlocksCpuNs / 1e9:F2} CPU-s)  blocksets {run.BlocksetsPerSecond(stream.Files),10:N0}/s ({run.BlocksetsCpuNs / 1e9:F2} CPU-s)  load {run.Load:F2}{(run.Error is null ? string.Empty : "  FAILED: " + run.Error)}"));
                }
            }

            _ = RecreateReport.Write(s with { Rounds = round }, stream, started, clock.Elapsed, native, results); // a partial report after each round
        }

        var report = RecreateReport.Write(s, stream, started, clock.Elapsed, native, results);
        Console.WriteLine(report);
        Console.WriteLine($"Results: {Path.Combine(s.OutDir, "recreate.md")}, runs.csv");
        return results.Any(r => r.Error is not null) ? 1 : 0;
    }
}

/// <summary>The settings of <c>bench recreate</c>.</summary>
internal sealed record RecreateSettings(int Blocks, int Rounds, IReadOnlyList<string> Providers, IReadOnlyList<BlockLayout> Layouts, int Batch, int Seed, string WorkDir, string OutDir, bool BlocksOnly);
