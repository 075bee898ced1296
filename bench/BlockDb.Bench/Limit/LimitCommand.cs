using System.CommandLine;
using BlockDb.Bench.Cli;
using BlockDb.Opening;

namespace BlockDb.Bench.Limit;

/// <summary>
/// The <c>limit</c> subcommand (issue 25 item 6): how fast on this machine. Find, select-xor-insert (half new) and a
/// rebuild (<c>ImportBlocksAsync</c> into a new KeyMap file) per SQLite provider beside the same work in C, in one run,
/// rounds interleaved, each provider's ratio to C taken per round (wall and worker-thread CPU).
/// </summary>
internal static class LimitCommand
{
    public static Command Create()
    {
        var blocks = new Option<string?>("--blocks") { Description = "Blocks in the pre-filled file of find and select-xor-insert, and blocks the rebuild imports (default 1e6; 1e5, 2m work too)." };
        var rounds = new Option<int?>("--rounds", "-r") { Description = "Rounds: each runs every provider and the C loops once per workload, the order rotated by one each round (default 3)." };
        var providers = ListParser.ListOption("--providers", "MicrosoftData, SystemData, PInvoke (comma-separated or repeated; default all three). The C loops always run.");
        var workloads = ListParser.ListOption("--workloads", "find, sxi, import (comma-separated or repeated; default all three).");
        var ops = new Option<int?>("--ops") { Description = "Timed ops of find and select-xor-insert per run (default 200,000; the warm-up is half of it)." };
        var importBatch = new Option<int?>("--import-batch") { Description = "Blocks per import transaction, on both sides (default 100,000, ImportOptions' default)." };
        var smoke = new Option<bool>("--smoke") { Description = "Seconds (CI): 2,000 blocks, 300 ops, one round; exits 1 when a run fails or an answer differs from the oracle." };
        var seed = new Option<int?>("--seed") { Description = "Data seed (default 42)." };
        var work = new Option<DirectoryInfo?>("--work") { Description = "Scratch folder for the templates, fresh copies, data files and the C program (default $TMPDIR/blockdb-bench)." };
        var output = new Option<DirectoryInfo?>("--out", "-o") { Description = "Output folder for limit.md and runs.csv (default bench/results/<timestamp>-limit)." };
        var plain = new Option<bool>("--plain") { Description = "Plain progress lines even on a terminal." };
        var command = new Command("limit", "How fast on this machine: find, select-xor-insert (half new) and a rebuild (ImportBlocksAsync into a new KeyMap file) per SQLite provider beside the same work in C, on the same file and keys, rounds interleaved; ops/s, ratio to C per round (wall and worker-thread CPU), the load average beside each round.")
        {
            blocks, rounds, providers, workloads, ops, importBatch, smoke, seed, work, output, plain,
        };
        command.SetAction(result =>
        {
            LimitSettings settings;
            try
            {
                var isSmoke = result.GetValue(smoke);
                var size = result.GetValue(blocks) is { } b ? ListParser.Size(b) : isSmoke ? 2_000 : 1_000_000;
                var timed = result.GetValue(ops) ?? (isSmoke ? 300 : 200_000);
                settings = new LimitSettings
                {
                    Blocks = checked((int)size),
                    Ops = timed,
                    Warmup = isSmoke ? 50 : Math.Max(1, timed / 2),
                    Rounds = result.GetValue(rounds) ?? (isSmoke ? 1 : 3),
                    Providers = ListParser.Values(result, providers)?.Select(ListParser.Provider).Distinct().ToList() ?? [.. ProviderCatalog.SqliteNames],
                    Workloads = ListParser.Values(result, workloads)?.Select(LimitSettings.Workload).Distinct().ToList() ?? [.. LimitStudy.Workloads],
                    ImportBatch = result.GetValue(importBatch) ?? new ImportOptions().ItemsPerTransaction,
                    JitWarmupRuns = isSmoke ? 0 : 6,
                    Seed = result.GetValue(seed) ?? 42,
                    WorkDir = result.GetValue(work)?.FullName ?? Path.Combine(Path.GetTempPath(), "blockdb-bench"),
                    OutDir = result.GetValue(output)?.FullName ?? BenchCommand.DefaultOut("limit"),
                    Plain = result.GetValue(plain),
                    Smoke = isSmoke,
                };
                settings.Validate();
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine(e.Message);
                return 2;
            }

            return LimitStudy.Run(settings);
        });
        return command;
    }
}
