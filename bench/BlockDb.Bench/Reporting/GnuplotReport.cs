using System.Globalization;
using System.Text;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;

namespace BlockDb.Bench.Reporting;

/// <summary>
/// PNG plots through gnuplot (pngcairo): one image per study with a panel per workload (lines for size,
/// batch and threads; clustered bars for pragma sets and api paths), ratio to native against size, and the
/// ratio to native of every workload at the reference configuration. The generated <c>.gp</c> scripts hold
/// their data inline and stay beside the PNGs; without gnuplot they are written and rendering is skipped.
/// </summary>
internal static class GnuplotReport
{
    private const int PanelWidth = 520;
    private const int PanelHeight = 360;

    public static (IReadOnlyList<string> Pngs, string Note) Write(string folder, ReportData d)
    {
        var plots = Path.Combine(folder, "plots");
        Directory.CreateDirectory(plots);
        var scripts = new Dictionary<string, string>();
        foreach (var study in d.Settings.Studies)
        {
            if (StudyScript(d, study) is { } script)
            {
                scripts[study.ToString().ToLowerInvariant()] = script;
            }
        }

        if (d.Settings.Providers.Contains(RunSpec.NativeProvider))
        {
            if (d.Settings.Studies.Contains(Study.Size) && SizeRatioScript(d) is { } sizeRatio)
            {
                scripts["size-ratio"] = sizeRatio;
            }

            if (RatioScript(d) is { } ratio)
            {
                scripts["ratio"] = ratio;
            }
        }

        foreach (var (name, script) in scripts)
        {
            File.WriteAllText(Path.Combine(plots, name + ".gp"), script.Replace("@OUT@", name + ".png", StringComparison.Ordinal));
        }

        var version = ProcessRunner.ToolVersion("gnuplot", "--version");
        if (version is null)
        {
            return ([], "Plots skipped: gnuplot was not found (install gnuplot-nox); the .gp scripts are in plots/ and render with `gnuplot <name>.gp`.");
        }

        var pngs = new List<string>();
        var failures = new List<string>();
        foreach (var name in scripts.Keys)
        {
            var (code, _, stderr) = ProcessRunner.Run("gnuplot", [name + ".gp"], plots, 120_000);
            if (code == 0 && File.Exists(Path.Combine(plots, name + ".png")))
            {
                pngs.Add(name + ".png");
            }
            else
            {
                failures.Add($"{name}: {stderr.Trim()}");
            }
        }

        return (pngs, failures.Count == 0 ? $"Plots rendered with {version}." : $"Some plots failed ({version}): {string.Join(" | ", failures)}");
    }

    private static string? StudyScript(ReportData d, Study study)
    {
        var workloads = d.Settings.Workloads.Where(w => d.Points(study, w).Count > 0).ToList();
        if (workloads.Count == 0)
        {
            return null;
        }

        var bars = study is Study.Pragma or Study.Api or Study.Limit;
        var perOp = study == Study.Scale;
        var script = Header(workloads.Count, perOp ? $"Scale study: us per op by layout (median of {d.Settings.Repetitions}; lower is better)" : $"{study} study: k ops/s (median of {d.Settings.Repetitions})", bars);
        foreach (var w in workloads)
        {
            var points = d.Points(study, w);
            var series = points.Select(p => p.Series).Distinct().ToList();
            var xs = points.OrderBy(p => p.X).Select(p => (p.X, p.XLabel)).Distinct().ToList();
            var table = new StringBuilder();
            foreach (var (x, label) in xs)
            {
                table.Append(Num(x)).Append(" \"").Append(label).Append('"');
                foreach (var se in series)
                {
                    var r = points.FirstOrDefault(p => p.Series == se && p.XLabel == label) is { } p ? d.Find(p.Spec) : null;
                    table.Append(' ').Append(r is null || r.Failed || r.MedianOps <= 0 ? "?" : Num(perOp ? r.UsPerOp : r.MedianOps / 1000));
                }

                table.Append('\n');
            }

            var block = "$" + Id(study.ToString() + "_" + WorkloadInfo.Name(w));
            script.Append(block).Append(" << EOD\n").Append(table).Append("EOD\n");
            script.Append("set title \"").Append(WorkloadInfo.Name(w)).Append("\"\n");
            script.Append(perOp ? "set ylabel \"us per op\"\nset yrange [0:*]\n" : "set ylabel \"k ops/s\"\nset yrange [0:*]\n");
            if (bars)
            {
                script.Append("set xlabel \"\"\n");
                script.Append("plot ").AppendJoin(", ", series.Select((se, i) => $"{(i == 0 ? block : "''")} using {i + 3}{(i == 0 ? ":xtic(2)" : string.Empty)} title \"{se}\" lc rgb \"{Color(se)}\"")).Append('\n');
            }
            else
            {
                script.Append(study switch
                {
                    Study.Size or Study.Scale => "set logscale x 10\nset xlabel \"pre-filled blocks\"\n",
                    Study.Batch => "set logscale x 2\nset xlabel \"commit every (writes)\"\n",
                    _ => "unset logscale x\nset xlabel \"threads\"\n",
                });
                script.Append("plot ").AppendJoin(", ", series.Select((se, i) => $"{block} using 1:{i + 3}:xtic(2) with linespoints title \"{se}\" lc rgb \"{Color(se)}\" dt {DashType(se)} pt {7 + (i % 6)}")).Append('\n');
            }
        }

        return script.Append("unset multiplot\n").ToString();
    }

    private static string? SizeRatioScript(ReportData d)
    {
        var workloads = d.Settings.Workloads.Where(w => d.Points(Study.Size, w).Any(p => p.Spec.IsNative)).ToList();
        if (workloads.Count == 0)
        {
            return null;
        }

        var script = Header(workloads.Count, "Ratio to the native C baseline against DB size (1 = as fast as C)", bars: false);
        foreach (var w in workloads)
        {
            var points = d.Points(Study.Size, w).Where(p => !p.Spec.IsNative).ToList();
            var series = points.Select(p => p.Series).Distinct().ToList();
            var table = new StringBuilder();
            foreach (var (x, label) in points.OrderBy(p => p.X).Select(p => (p.X, p.XLabel)).Distinct())
            {
                table.Append(Num(x)).Append(" \"").Append(label).Append('"');
                foreach (var se in series)
                {
                    var r = points.FirstOrDefault(p => p.Series == se && p.XLabel == label) is { } p ? d.Find(p.Spec) : null;
                    table.Append(' ').Append(r is null || double.IsNaN(r.RatioToNative) ? "?" : Num(r.RatioToNative));
                }

                table.Append('\n');
            }

            var block = "$" + Id("ratio_" + WorkloadInfo.Name(w));
            script.Append(block).Append(" << EOD\n").Append(table).Append("EOD\n");
            script.Append("set title \"").Append(WorkloadInfo.Name(w)).Append("\"\nset ylabel \"x native\"\nset yrange [0:*]\nset logscale x 10\nset xlabel \"pre-filled blocks\"\n");
            script.Append("plot ").AppendJoin(", ", series.Select((se, i) => $"{block} using 1:{i + 3}:xtic(2) with linespoints title \"{se}\" lc rgb \"{Color(se)}\" pt {7 + i}"))
                .Append(", 1 with lines dt 2 lc rgb \"gray\" notitle\n");
        }

        return script.Append("unset multiplot\n").ToString();
    }

    private static string? RatioScript(ReportData d)
    {
        var providers = d.Settings.Providers.Where(p => !RunSpec.IsNativeName(p)).ToList();
        var workloads = d.Settings.Workloads.Where(w => providers.Any(p => d.Reference(w, p) is { RatioToNative: > 0 })).ToList();
        if (workloads.Count == 0 || providers.Count == 0)
        {
            return null;
        }

        var script = new StringBuilder();
        script.Append(CultureInfo.InvariantCulture, $"set terminal pngcairo size {Math.Max(640, 110 * workloads.Count * providers.Count / 2)},420 enhanced font \"Sans,9\"\nset output \"@OUT@\"\n");
        script.Append(CultureInfo.InvariantCulture, $"set title \"Ratio to the native C baseline, {RunSpec.SizeLabel(d.Settings.RefSize)} rows, reference configuration (1 = as fast as C)\"\n");
        script.Append("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\nset grid ytics\nset yrange [0:*]\nset ylabel \"x native\"\nset key top right\nset datafile missing \"?\"\n");
        script.Append("set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb \"gray\"\n");
        script.Append("$ratio << EOD\n");
        foreach (var w in workloads)
        {
            script.Append('"').Append(WorkloadInfo.Name(w)).Append('"');
            foreach (var p in providers)
            {
                script.Append(' ').Append(d.Reference(w, p) is { RatioToNative: > 0 } r ? Num(r.RatioToNative) : "?");
            }

            script.Append('\n');
        }

        script.Append("EOD\nplot ").AppendJoin(", ", providers.Select((p, i) => $"{(i == 0 ? "$ratio" : "''")} using {i + 2}{(i == 0 ? ":xtic(1)" : string.Empty)} title \"{p}\" lc rgb \"{Color(p)}\"")).Append('\n');
        return script.ToString();
    }

    private static StringBuilder Header(int panels, string title, bool bars)
    {
        var columns = Math.Min(panels, 3);
        var rows = (panels + columns - 1) / columns;
        var script = new StringBuilder();
        script.Append(CultureInfo.InvariantCulture, $"set terminal pngcairo size {columns * PanelWidth},{(rows * PanelHeight) + 30} enhanced font \"Sans,9\"\n");
        script.Append("set output \"@OUT@\"\nset datafile missing \"?\"\nset grid ytics\nset key below horizontal font \",7\" samplen 2\n");
        if (bars)
        {
            script.Append("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\nset xtics rotate by -30\n");
        }

        script.Append(CultureInfo.InvariantCulture, $"set multiplot layout {rows},{columns} title \"{title}\"\n");
        return script;
    }

    /// <summary>Dashes: shared connections and the TextHash layout dashed, BlobHash dotted, the rest solid.</summary>
    private static int DashType(string series) => series.Split(' ')[^1] switch
    {
        "shared" or "TextHash" => 2,
        "BlobHash" => 3,
        _ => 1,
    };

    private static string Color(string series) => series.Split(' ')[0] switch
    {
        "MicrosoftData" => "#1f77b4",
        "SystemData" => "#ff7f0e",
        "PInvoke" => "#2ca02c",
        "Native" => "#000000",
        "NativePlain" => "#7f7f7f",
        _ => "#9467bd",
    };

    private static string Id(string text) => new([.. text.Select(c => char.IsAsciiLetterOrDigit(c) ? c : '_')]);

    private static string Num(double value) => value.ToString("0.######", CultureInfo.InvariantCulture);
}
