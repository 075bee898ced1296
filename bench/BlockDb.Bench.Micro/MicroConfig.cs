using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Exporters.Csv;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Order;
using BenchmarkDotNet.Toolchains.InProcess.Emit;

namespace BlockDb.Bench.Micro;

/// <summary>
/// Short job (3 warm-up and 3 measured iterations, one launch) run in-process (InProcessEmitToolchain: no
/// child project is generated and built, so it works offline and fast), allocated bytes per op, CSV and
/// GitHub Markdown tables, fastest first.
/// </summary>
internal static class MicroConfig
{
    public static IConfig Create()
    {
        var config = ManualConfig.CreateMinimumViable()
            .AddJob(Job.ShortRun.WithToolchain(InProcessEmitToolchain.Instance).WithId("ShortRun-InProcess"))
            .AddDiagnoser(MemoryDiagnoser.Default)
            .AddExporter(CsvExporter.Default, MarkdownExporter.GitHub)
            .AddColumn(CategoriesColumn.Default)
            .WithOrderer(new DefaultOrderer(SummaryOrderPolicy.FastestToSlowest))
            .WithSummaryStyle(BenchmarkDotNet.Reports.SummaryStyle.Default.WithMaxParameterColumnWidth(20));
#if DEBUG
        // BenchmarkDotNet refuses non-optimized assemblies; let a Debug build run (Program prints a warning).
        config = config.WithOptions(ConfigOptions.DisableOptimizationsValidator);
#endif
        return config;
    }
}
