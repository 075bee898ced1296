using System.CommandLine;
using System.Globalization;
using BlockDb.Bench.Concurrency;
using BlockDb.Bench.Reporting;

namespace BlockDb.Bench.Cli;

/// <summary>The <c>concurrency</c> subcommand: seed 002's 1 to 1,000 concurrent inserts, one transaction each versus group commit.</summary>
internal static class ConcurrencyCommand
{
    public static Command Create()
    {
        var smoke = new Option<bool>("--smoke") { Description = "Seconds: 1 and 50 callers, synchronous NORMAL, one repetition; exits 1 if any run fails." };
        var providers = new Option<string[]>("--providers") { Description = "MicrosoftData, SystemData, PInvoke (default all).", AllowMultipleArgumentsPerToken = true };
        var callers = new Option<int[]>("--callers") { Description = "Concurrent callers, space-separated (default 1 10 100 1000).", AllowMultipleArgumentsPerToken = true };
        var syncs = new Option<SynchronousMode[]>("--synchronous") { Description = "Normal, Full, space-separated (default both).", AllowMultipleArgumentsPerToken = true };
        var repetitions = new Option<int?>("--repetitions", "-r") { Description = "Repetitions per configuration (default 3)." };
        var output = new Option<DirectoryInfo?>("--out", "-o") { Description = "Output folder (default bench/results/<timestamp>-concurrency)." };
        var command = new Command("concurrency", "Concurrent inserts (1 to 1,000 callers): one transaction per insert versus the shared session's group commit; ops/s and per-call p50/p99/max.")
        {
            smoke, providers, callers, syncs, repetitions, output,
        };
        command.SetAction(async (result, cancellationToken) =>
        {
            var stamp = DateTime.UtcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture);
            var folder = result.GetValue(output)?.FullName ?? Path.Combine(AppContext.BaseDirectory, "..", "..", "..", "..", "results", $"{stamp}-concurrency");
            var settings = result.GetValue(smoke) ? ConcurrencySettings.Smoke(folder) : ConcurrencySettings.Quick(folder);
            settings = settings with
            {
                Providers = Split(result.GetValue(providers)) is { Count: > 0 } p ? p : settings.Providers,
                Callers = result.GetValue(callers) is { Length: > 0 } c ? c : settings.Callers,
                SyncModes = result.GetValue(syncs) is { Length: > 0 } s ? s : settings.SyncModes,
                Repetitions = result.GetValue(repetitions) ?? settings.Repetitions,
                OutputFolder = Path.GetFullPath(folder),
            };
            try
            {
                var work = Path.Combine(Path.GetTempPath(), "blockdb-bench", "concurrency");
                var results = await ConcurrencyStudy.RunAsync(settings, work, line => Console.Error.WriteLine(line));
                var machine = MachineInfo.Collect(settings.Providers, null).Entries;
                Console.WriteLine(ConcurrencyReport.Write(settings, results, machine));
                Console.WriteLine($"Written to {settings.OutputFolder}");
                return 0;
            }
            catch (Exception e) when (e is BlockDbException or InvalidOperationException or IOException)
            {
                Console.Error.WriteLine($"concurrency study failed: {e}");
                return 1;
            }
        });
        return command;
    }

    private static List<string> Split(string[]? values) =>
        values is null ? [] : [.. values.SelectMany(v => v.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))];
}
