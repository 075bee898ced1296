using System.Globalization;
using System.Text;
using BlockDb.Bench.Data;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Limit;
using BlockDb.Bench.Reporting;

namespace BlockDb.Bench.Recreate;

/// <summary>Writes <c>recreate.md</c> (per layout and side: blocks/s, blocksets/s, ratios to C per round; every run with its load) and <c>runs.csv</c>.</summary>
internal static class RecreateReport
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    public static string Write(RecreateSettings s, RecreateStream stream, DateTimeOffset started, TimeSpan elapsed, NativeBuild native, IReadOnlyList<RecreateRun> runs)
    {
        var loads = runs.Select(r => r.Load).Where(l => !double.IsNaN(l)).DefaultIfEmpty(double.NaN).ToList();
        var md = new StringBuilder();
        md.AppendLine("# bench recreate: blocks and blocksets rebuilt from a Duplicati-like stream");
        md.AppendLine();
        md.AppendLine(string.Create(Inv, $"{started:yyyy-MM-dd HH:mm} UTC, {elapsed.TotalSeconds:F0} s, SQLite {native.Version} ({native.Compiler.Split('\n')[0]}), {Environment.ProcessorCount} cores; load average (1-min) {Fmt.Num(loads.Min(), "0.0")} to {Fmt.Num(loads.Max(), "0.0")} at the runs' starts."));
        md.AppendLine();
        md.AppendLine(string.Create(Inv, $"The stream: {stream.Blocks:N0} blocks in {stream.Volumes:N0} volumes of {RecreateStream.BlocksPerVolume} (the volume index files: hash, size, volume), {stream.Files:N0} files with {stream.Refs.Length:N0} block references (the file lists: full hash, length, blocks), {RecreateStream.RepeatShare:P0} of a file's blocks repeating an earlier block; {FileSizeModel.Description}. **BlockDb**: `ImportBlocksAsync` of the blocks with their volume, then `ImportBlocksetsAsync` of the files (full hash given), {s.Batch:N0} items per transaction, Recommended pragmas, on a fresh copy of an empty file with the volumes registered; inputs built before timing. **C, plain**: `blockdb_native.c --workload recreate` on a copy of the same template with the same SQL text and stream file: one prepared INSERT per row, {s.Batch:N0} rows per transaction, the hash -> ID map in memory (no verification read, no existence check), the KeyMap insert guard dropped before timing. Each ratio is a run over the C run of the same layout and round; median [min–max] over {s.Rounds} round(s). CPU = the calling thread's CPU time."));
        md.AppendLine();
        md.AppendLine("| layout | side | blocks/s | blocksets/s | blocks+blocksets s | blocks vs C (wall) | (CPU) | blocksets vs C (wall) | (CPU) | whole vs C (wall) | (CPU) |");
        md.AppendLine("|---|---|---|---|---|---|---|---|---|---|---|");
        var ok = runs.Where(r => r.Error is null).ToList();
        foreach (var group in ok.GroupBy(r => (r.Layout, r.Side)).OrderBy(g => s.Layouts.ToList().IndexOf(g.Key.Layout)).ThenBy(g => g.Key.Side == RecreateRuns.C ? 0 : 1))
        {
            var list = group.ToList();
            RecreateRun? CRun(RecreateRun r) => ok.FirstOrDefault(c => c.Side == RecreateRuns.C && c.Layout == r.Layout && c.Round == r.Round);
            Spread Ratio(Func<RecreateRun, double> f) => Spread.Of(list.Select(r => CRun(r) is { } c ? f(c) / f(r) : double.NaN));
            md.AppendLine(string.Create(Inv, $"| {group.Key.Layout} | {group.Key.Side} | {Rate(Spread.Of(list.Select(r => r.BlocksPerSecond(stream.Blocks))))} | {Rate(Spread.Of(list.Select(r => r.BlocksetsPerSecond(stream.Files))))} | {Fmt.Num(Spread.Of(list.Select(r => (r.BlocksNs + r.BlocksetsNs) / 1e9)).Median, "0.00")} | {R(Ratio(r => r.BlocksNs))} | {R(Ratio(r => r.BlocksCpuNs))} | {R(Ratio(r => r.BlocksetsNs))} | {R(Ratio(r => r.BlocksetsCpuNs))} | {R(Ratio(r => r.BlocksNs + r.BlocksetsNs))} | {R(Ratio(r => r.BlocksCpuNs > 0 && r.BlocksetsCpuNs > 0 ? r.BlocksCpuNs + r.BlocksetsCpuNs : 0))} |"));
        }

        md.AppendLine();
        md.AppendLine("## Runs");
        md.AppendLine();
        md.AppendLine("| round | layout | side | blocks s | blocks CPU s | blocksets s | blocksets CPU s | load | check |");
        md.AppendLine("|---|---|---|---|---|---|---|---|---|");
        foreach (var r in runs.OrderBy(r => r.Round).ThenBy(r => s.Layouts.ToList().IndexOf(r.Layout)))
        {
            md.AppendLine(string.Create(Inv, $"| {r.Round} | {r.Layout} | {r.Side} | {r.BlocksNs / 1e9:F2} | {r.BlocksCpuNs / 1e9:F2} | {r.BlocksetsNs / 1e9:F2} | {r.BlocksetsCpuNs / 1e9:F2} | {Fmt.Num(r.Load, "0.0")} | {(r.Error is null ? "ok" : "FAILED: " + r.Error)} |"));
        }

        md.AppendLine();
        md.AppendLine("Every run was checked against the oracle: the counts (blocks, blocksets, entries), and every sampled blockset (one in " + Math.Max(1, stream.Files / 2000).ToString("N0", Inv) + ") listed back block by block (BlockDb: hash and size against the stream; all sides: the digest of their block IDs); a run that differs is marked FAILED and the command exits 1.");
        var text = md.ToString();
        File.WriteAllText(Path.Combine(s.OutDir, "recreate.md"), text);
        var csv = new StringBuilder("round,layout,side,blocks,files,entries,blocks_ns,blocks_cpu_ns,blocksets_ns,blocksets_cpu_ns,load_1min,error\n");
        foreach (var r in runs)
        {
            csv.AppendLine(string.Create(Inv, $"{r.Round},{r.Layout},{r.Side},{stream.Blocks},{stream.Files},{stream.Refs.Length},{r.BlocksNs},{r.BlocksCpuNs},{r.BlocksetsNs},{r.BlocksetsCpuNs},{Fmt.Num(r.Load, "0.00")},\"{r.Error?.Replace("\"", "'", StringComparison.Ordinal)}\""));
        }

        File.WriteAllText(Path.Combine(s.OutDir, "runs.csv"), csv.ToString());
        return text;
    }

    private static string Rate(Spread s) => double.IsNaN(s.Median) ? "-" : $"{Fmt.Rate(s.Median)} [{Fmt.Rate(s.Min)}–{Fmt.Rate(s.Max)}]";

    private static string R(Spread s) => double.IsNaN(s.Median) ? "–" : $"**{Fmt.Ratio(s.Median)}** [{Fmt.Num(s.Min, "0.00")}–{Fmt.Num(s.Max, "0.00")}]";
}
