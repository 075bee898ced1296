using System.Globalization;
using System.Reflection;
using System.Text;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;
using BlockDb.Bench.Reporting;

namespace BlockDb.Bench.Limit;

/// <summary>Writes <c>limit.md</c> (the table, the rounds with their load, the machine) and <c>runs.csv</c> (one row per run).</summary>
internal static class LimitReport
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    /// <summary>Writes both files; returns the Markdown (the console prints it).</summary>
    public static string Write(LimitSettings l, DateTimeOffset started, TimeSpan elapsed, MachineInfo machine, IReadOnlyList<RepetitionResult> runs, IReadOnlyList<LimitRow> rows, IReadOnlyList<string> issues)
    {
        var md = new StringBuilder();
        md.AppendLine("# bench limit: how fast on this machine");
        md.AppendLine();
        md.AppendLine(string.Create(Inv, $"{started:yyyy-MM-dd HH:mm} UTC, {elapsed.TotalSeconds:F0} s, BlockDb {Commit()}. Load average (1-min) from {Fmt.Num(Load(runs).Min, "0.0")} to {Fmt.Num(Load(runs).Max, "0.0")} at the runs' starts (per round below)."));
        md.AppendLine();
        md.AppendLine(string.Create(Inv, $"KeyMap layout, BlockDb's Recommended pragmas (WAL, synchronous=NORMAL), one thread, one session, `await` on the public API, string hashes. **find** = `FindBlockAsync` of a block of a {l.Blocks:N0}-block file; **sxi** = `SelectXorInsertAsync` (select-then-insert), half of the blocks new, `CommitEvery` {LimitSettings.CommitEvery:N0}; {l.Ops:N0} timed ops after {l.Warmup:N0} warm-up ops on the same fresh copy. **import** = `ImportBlocksAsync` of {l.Blocks:N0} new blocks into a fresh copy of an empty KeyMap file, {l.ImportBatch:N0} per transaction (hashes parsed before timing). C: `bench/native/blockdb_native.c` on the same file, keys and `libe_sqlite3`: *same design* (BlockDb's batches, map and verification read) and *plain* (the same statements in one transaction; for import the plain loop: rows at their IDs, the map filled as they go in, the per-row trigger dropped before timing, where the same design lifts and restores it in each transaction). {l.Rounds} round(s): in each, every run once per workload, the order rotated by one each round; each ratio is a run over the C run of the same workload and round, median [min–max] over rounds. CPU = the worker thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`; not counted when an import call left its thread)."));
        md.AppendLine();
        md.AppendLine("| workload | run | ops/s median [min–max] | ops per CPU-s | vs C same design (wall) | (CPU) | vs C plain (wall) | (CPU) |");
        md.AppendLine("|---|---|---|---|---|---|---|---|");
        foreach (var r in rows)
        {
            md.AppendLine($"| {Name(r.Workload)} | {Label(r.Provider)} | {Rate(r.OpsPerSecond)} | {Fmt.Rate(r.CpuOpsPerSecond.Median)} | {Ratio(r.ToSame)} | {Ratio(r.CpuToSame)} | {Ratio(r.ToPlain)} | {Ratio(r.CpuToPlain)} |");
        }

        md.AppendLine();
        md.AppendLine("## Rounds");
        md.AppendLine();
        md.AppendLine("Each run's ops/s, ratio to C (same design for find and sxi, the plain loop for import: the issue's references) on wall time, and the load average (1-min) at its start.");
        md.AppendLine();
        md.AppendLine("| workload | round | run | ops/s | vs C | load |");
        md.AppendLine("|---|---|---|---|---|---|");
        foreach (var r in runs.OrderBy(r => LimitStudy.Workloads.ToList().IndexOf(r.Spec.Workload)).ThenBy(r => r.Repetition))
        {
            var c = Baseline(runs, r);
            var ratio = r.Failed ? "FAILED" : c is null || r.Spec.IsNative ? "-" : Fmt.Ratio(r.OpsPerSecond / c.OpsPerSecond);
            md.AppendLine(string.Create(Inv, $"| {Name(r.Spec.Workload)} | {r.Repetition} | {Label(r.Spec.Provider)} | {(r.Failed ? "-" : Fmt.Rate(r.OpsPerSecond))} | {ratio} | {Fmt.Num(r.LoadAverage, "0.0")} |"));
        }

        md.AppendLine();
        foreach (var f in runs.Where(r => r.Failed))
        {
            md.AppendLine($"- FAILED: {f.Spec} round {f.Repetition}: {f.Error ?? string.Join("; ", f.Issues)}");
        }

        foreach (var issue in issues)
        {
            md.AppendLine($"- FAILED: {issue}");
        }

        md.AppendLine("Every run's answers were checked against the oracle (IDs, created blocks, row counts, journal mode); a run that differs is marked FAILED and the command exits 1.");
        md.AppendLine();
        md.AppendLine("## Machine");
        md.AppendLine();
        md.AppendLine("| | |");
        md.AppendLine("|---|---|");
        foreach (var (key, value) in machine.Entries)
        {
            md.AppendLine($"| {key} | {value} |");
        }

        var text = md.ToString();
        File.WriteAllText(Path.Combine(l.OutDir, "limit.md"), text);
        WriteCsv(Path.Combine(l.OutDir, "runs.csv"), runs);
        return text;
    }

    private static RepetitionResult? Baseline(IReadOnlyList<RepetitionResult> runs, RepetitionResult r)
    {
        var provider = r.Spec.Workload == Workload.Import ? RunSpec.NativePlainProvider : RunSpec.NativeProvider;
        return runs.FirstOrDefault(c => c.Spec.Provider == provider && c.Spec.Workload == r.Spec.Workload && c.Repetition == r.Repetition && !c.Failed);
    }

    private static void WriteCsv(string path, IReadOnlyList<RepetitionResult> runs)
    {
        var csv = new StringBuilder("workload,provider,round,blocks,ops,elapsed_ns,cpu_ns,ops_per_s,ops_per_cpu_s,load_1min,sqlite,failed,error\n");
        foreach (var r in runs)
        {
            csv.AppendLine(string.Create(Inv, $"{Name(r.Spec.Workload)},{r.Spec.Provider},{r.Repetition},{(r.Spec.Workload == Workload.Import ? r.Spec.Ops : r.Spec.Size)},{r.Ops},{r.ElapsedNs},{r.CpuNs},{r.OpsPerSecond:F0},{r.OpsPerCpuSecond:F0},{Fmt.Num(r.LoadAverage, "0.00")},{r.SqliteVersion},{r.Failed},\"{(r.Error ?? string.Join("; ", r.Issues)).Replace("\"", "'", StringComparison.Ordinal)}\""));
        }

        File.WriteAllText(path, csv.ToString());
    }

    private static (double Min, double Max) Load(IReadOnlyList<RepetitionResult> runs)
    {
        var loads = runs.Select(r => r.LoadAverage).Where(v => !double.IsNaN(v)).DefaultIfEmpty(double.NaN).ToList();
        return (loads.Min(), loads.Max());
    }

    private static string Name(Workload w) => w switch
    {
        Workload.Select => "find",
        Workload.XorSelectInsert => "sxi",
        _ => WorkloadInfo.Name(w),
    };

    private static string Label(string provider) => provider switch
    {
        RunSpec.NativeProvider => "C, same design",
        RunSpec.NativePlainProvider => "C, plain",
        _ => provider,
    };

    private static string Rate(Spread s) => double.IsNaN(s.Median) ? "-" : $"{Fmt.Rate(s.Median)} [{Fmt.Rate(s.Min)}–{Fmt.Rate(s.Max)}]";

    private static string Ratio(Spread s) => double.IsNaN(s.Median) ? "–" : $"**{Fmt.Ratio(s.Median)}** [{Fmt.Num(s.Min, "0.00")}–{Fmt.Num(s.Max, "0.00")}]";

    /// <summary>The commit measured: the build's source revision when the SDK stamped it, else <c>git rev-parse</c> of the working folder.</summary>
    private static string Commit()
    {
        var info = typeof(BlockDatabase).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
        if (info?.IndexOf('+', StringComparison.Ordinal) is int plus and >= 0)
        {
            var sha = info[(plus + 1)..];
            return "commit " + (sha.Length > 12 ? sha[..12] : sha);
        }

        try
        {
            var (code, stdout, _) = ProcessRunner.Run("git", ["rev-parse", "--short=12", "HEAD"], timeoutMs: 10_000);
            return code == 0 ? "commit " + stdout.Trim() : "commit unknown";
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return "commit unknown";
        }
    }
}
