using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Cli;
using BlockDb.Bench.Reporting;
using BlockDb.Opening;

namespace BlockDb.Bench.Lifecycle;

/// <summary>
/// The <c>lifecycle</c> subcommand (issue 12's targets): deleting a share of 1e6 blocksets and collecting their
/// unreferenced blocks, per layout and provider; converting a 1e6-block TextHash file to KeyMap and BlobHash.
/// </summary>
internal static class LifecycleCommand
{
    public static Command Create()
    {
        var smoke = new Option<bool>("--smoke") { Description = "Seconds: every provider, layout and conversion on 2,000 blocksets and a 2,000-block file, one repetition; exits 1 on any failure (CI)." };
        var providers = ListParser.ListOption("--providers", "MicrosoftData, SystemData, PInvoke (comma-separated or repeated; default all).");
        var layouts = ListParser.ListOption("--layouts", "Layouts of the delete-and-collect part: TextHash, BlobHash, KeyMap (default all).");
        var convertTo = ListParser.ListOption("--convert-to", "Layouts a TextHash file is converted to: KeyMap, BlobHash (default both; none = skip the conversion part).");
        var blocksets = new Option<string?>("--blocksets") { Description = "Blocksets of the delete-and-collect template (default 1e6; 0 = skip that part)." };
        var convertBlocks = new Option<string?>("--convert-blocks") { Description = "Blocks of the TextHash file converted (default 1e6; 0 = skip the conversion part)." };
        var deleteShare = new Option<double?>("--delete-share") { Description = "Share of the blocksets deleted, evenly spread (default 0.1)." };
        var commitEvery = new Option<int?>("--commit-every") { Description = "Batching:CommitEvery of the deleting session (default 1000, BlockDb's default; 0 = one transaction)." };
        var repetitions = new Option<int?>("--repetitions", "-r") { Description = "Repetitions (default 3): every configuration once per repetition, the order rotated each time." };
        var sample = new Option<int?>("--sample") { Description = "Blocksets listed and compared with the plan after each run (default 1000)." };
        var seed = new Option<int?>("--seed") { Description = "Data seed (default 42)." };
        var work = new Option<DirectoryInfo?>("--work") { Description = "Templates and run copies (default $TMPDIR/blockdb-bench, shared with the sweep; 1e6 blocksets need ~2 GB)." };
        var output = new Option<DirectoryInfo?>("--out", "-o") { Description = "Output folder (default bench/results/<timestamp>-lifecycle)." };
        var dryRun = new Option<bool>("--dry-run") { Description = "Print the templates (built or not) and the runs in order, and exit." };
        var command = new Command("lifecycle", "Issue 12: delete 10 % of 1e6 blocksets and collect their blocks (per layout and provider; KeyMap against TextHash), convert a 1e6-block TextHash file to KeyMap and BlobHash.")
        {
            smoke, providers, layouts, convertTo, blocksets, convertBlocks, deleteShare, commitEvery, repetitions, sample, seed, work, output, dryRun,
        };
        command.SetAction(async (result, cancellationToken) =>
        {
            LifecycleSettings settings;
            try
            {
                var stamp = DateTime.UtcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture);
                var workFolder = result.GetValue(work)?.FullName ?? Path.Combine(Path.GetTempPath(), "blockdb-bench");
                var outFolder = result.GetValue(output)?.FullName ?? DefaultOut(stamp);
                var line = "dotnet run -c Release --project bench/BlockDb.Bench -- " + string.Join(' ', Environment.GetCommandLineArgs().Skip(1));
                settings = result.GetValue(smoke) ? LifecycleSettings.Smoke(workFolder, outFolder, line) : LifecycleSettings.Default(workFolder, outFolder, line);
                settings = settings with
                {
                    Providers = ListParser.Values(result, providers)?.Select(Provider).Distinct().ToList() ?? settings.Providers,
                    Layouts = ListParser.Values(result, layouts)?.Select(l => ListParser.Enum<BlockLayout>(l, "layout")).Distinct().ToList() ?? settings.Layouts,
                    ConvertTargets = ListParser.Values(result, convertTo) is { } targets
                        ? [.. targets.Where(t => !t.Equals("none", StringComparison.OrdinalIgnoreCase)).Select(t => ListParser.Enum<BlockLayout>(t, "layout")).Distinct()]
                        : settings.ConvertTargets,
                    Blocksets = Count(result.GetValue(blocksets)) ?? settings.Blocksets,
                    ConvertBlocks = Count(result.GetValue(convertBlocks)) ?? settings.ConvertBlocks,
                    DeleteShare = result.GetValue(deleteShare) ?? settings.DeleteShare,
                    CommitEvery = result.GetValue(commitEvery) ?? settings.CommitEvery,
                    Repetitions = result.GetValue(repetitions) ?? settings.Repetitions,
                    SampleBlocksets = result.GetValue(sample) ?? settings.SampleBlocksets,
                    Seed = result.GetValue(seed) ?? settings.Seed,
                };
                if (settings.ConvertTargets.Count == 0)
                {
                    settings = settings with { ConvertBlocks = 0 };
                }

                Validate(settings);
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine(e.Message);
                return 2;
            }

            var study = new LifecycleStudy(settings, line => Console.Error.WriteLine(line));
            var perRep = study.Order(0);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"BlockDb lifecycle study: {perRep.Count(o => !o.Convert)} delete-and-collect and {perRep.Count(o => o.Convert)} conversion configurations x {settings.Repetitions} repetitions = {perRep.Count * settings.Repetitions} runs."));
            if (result.GetValue(dryRun))
            {
                foreach (var (path, exists, what) in study.Templates())
                {
                    Console.WriteLine($"  template {(exists ? "cached" : "to build")}: {what}: {path}");
                }

                for (var rep = 0; rep < settings.Repetitions; rep++)
                {
                    foreach (var (layout, provider, convert) in study.Order(rep))
                    {
                        Console.WriteLine(convert ? $"  rep {rep + 1}: convert TextHash -> {layout} ({provider})" : $"  rep {rep + 1}: delete {settings.DeleteShare:P0} and collect, {layout} ({provider})");
                    }
                }

                return 0;
            }

#if DEBUG
            Console.WriteLine("WARNING: this is a Debug build; measure with -c Release.");
#endif
            var started = DateTimeOffset.UtcNow;
            var clock = Stopwatch.StartNew();
            try
            {
                await study.RunAsync();
            }
            catch (Exception e) when (e is BlockDbException or InvalidOperationException or IOException)
            {
                Console.Error.WriteLine($"lifecycle study failed: {e}");
                return 1;
            }

            var machine = MachineInfo.Collect(settings.Providers, null).Entries;
            Console.WriteLine(LifecycleReport.Write(settings, study, machine, started, clock.Elapsed));
            Console.WriteLine($"Written to {settings.OutputFolder}");
            var failed = study.Deletes.Count(r => r.Error is not null) + study.Converts.Count(r => r.Error is not null);
            if (failed > 0)
            {
                Console.WriteLine($"FAILED: {failed} run(s) failed or did not verify.");
                return 1;
            }

            return 0;
        });
        return command;
    }



    /// <summary>One of BlockDb's SQLite providers (the lifecycle runs through the public API only: no native baseline).</summary>
    private static string Provider(string text) =>
        ProviderCatalog.SqliteNames.FirstOrDefault(n => string.Equals(n, text, StringComparison.OrdinalIgnoreCase))
        ?? throw new ArgumentException($"Unknown provider '{text}' for the lifecycle study; valid: {string.Join(", ", ProviderCatalog.SqliteNames)}.");

    /// <summary>A count such as 1e6 or 10k, or 0 to skip a part; null when not given.</summary>
    private static int? Count(string? text) =>
        text is null ? null : text.Trim() == "0" ? 0 : (int)ListParser.Size(text);

    private static void Validate(LifecycleSettings s)
    {
        if (s.Providers.Count == 0 || (s.Blocksets > 0 && s.Layouts.Count == 0))
        {
            throw new ArgumentException("Nothing to run: --providers and --layouts must not be empty.");
        }

        if (s.Blocksets == 0 && s.ConvertBlocks == 0)
        {
            throw new ArgumentException("Nothing to run: --blocksets and --convert-blocks are both 0.");
        }

        if (s.DeleteShare is <= 0 or >= 1 || s.Repetitions < 1 || s.SampleBlocksets < 1 || s.CommitEvery < 0)
        {
            throw new ArgumentException("--delete-share must be between 0 and 1 (exclusive), --repetitions and --sample at least 1, --commit-every at least 0.");
        }
    }

    /// <summary>bench/results/&lt;timestamp&gt;-lifecycle when run from the repository, else ./blockdb-bench-results/….</summary>
    private static string DefaultOut(string stamp)
    {
        foreach (var start in new[] { Environment.CurrentDirectory, AppContext.BaseDirectory })
        {
            for (var dir = new DirectoryInfo(start); dir is not null; dir = dir.Parent)
            {
                if (File.Exists(Path.Combine(dir.FullName, "bench", "BlockDb.Bench", "BlockDb.Bench.csproj")))
                {
                    return Path.Combine(dir.FullName, "bench", "results", stamp + "-lifecycle");
                }
            }
        }

        return Path.Combine(Environment.CurrentDirectory, "blockdb-bench-results", stamp + "-lifecycle");
    }
}
