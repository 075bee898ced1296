using BenchmarkDotNet.Running;
using BlockDb.Bench.Micro;

#if DEBUG
Console.WriteLine("WARNING: BlockDb.Bench.Micro is a Debug build; its numbers are meaningless. Run: dotnet run -c Release --project bench/BlockDb.Bench.Micro -- --filter '*'");
#endif

var summaries = BenchmarkSwitcher.FromAssembly(typeof(RepositoryBenchmarks).Assembly).Run(args, MicroConfig.Create());
return summaries.Any(s => s.HasCriticalValidationErrors || s.Reports.Any(r => !r.Success)) ? 1 : 0;
