using BenchmarkDotNet.Running;
using BlockDb.Bench.Micro;

#if DEBUG
Console.WriteLine("WARNING: BlockDb.Bench.Micro is a Debug build; its numbers are meaningless. Run: dotnet run -c Release --project bench/BlockDb.Bench.Micro -- --filter '*'");
#endif

if (args is ["metrics-overhead", .. var rest])
{
    return MetricsOverheadProbe.Run(rest.Length > 0 ? int.Parse(rest[0], System.Globalization.CultureInfo.InvariantCulture) : 21);
}

if (args is ["keyof", .. var keyRounds])
{
    return KeyOfProbe.Run(keyRounds.Length > 0 ? int.Parse(keyRounds[0], System.Globalization.CultureInfo.InvariantCulture) : 21);
}

if (args is ["file16", .. var fileArgs])
{
    return FileOfSixteenProbe.Run(
        fileArgs.Length > 0 ? int.Parse(fileArgs[0], System.Globalization.CultureInfo.InvariantCulture) : 21,
        fileArgs.Length > 1 ? int.Parse(fileArgs[1], System.Globalization.CultureInfo.InvariantCulture) : 500,
        fileArgs.Length > 2 ? fileArgs[2].Split(',') : ["PInvoke", "MicrosoftData", "SystemData"],
        fileArgs.Length > 3 ? [.. fileArgs[3].Split(',').Select(l => Enum.Parse<BlockDb.BlockLayout>(l, ignoreCase: true))] : [BlockDb.BlockLayout.KeyMap, BlockDb.BlockLayout.TextHash, BlockDb.BlockLayout.BlobHash]);
}

var summaries = BenchmarkSwitcher.FromAssembly(typeof(RepositoryBenchmarks).Assembly).Run(args, MicroConfig.Create());
// A benchmark whose setup failed has no report at all: count the cases, not only the failed reports.
var failed = summaries.Where(s => s.HasCriticalValidationErrors || s.BenchmarksCases.Length != s.Reports.Count(r => r.Success)).ToList();
foreach (var summary in failed)
{
    Console.Error.WriteLine($"{summary.Title}: {summary.Reports.Count(r => r.Success)} of {summary.BenchmarksCases.Length} benchmarks ran.");
}

return failed.Count > 0 ? 1 : 0;
