using System.Globalization;
using BlockDb.Bench.Model;
using ScottPlot;

namespace BlockDb.Bench.Reporting;

/// <summary>
/// PNG plots drawn in process with ScottPlot (no program outside .NET): one image per study with a panel per workload
/// (lines for size, batch, threads and scale; clustered bars for pragma sets, api paths and the limit study), ratio to
/// native against size, and the ratio to native of every workload at the reference configuration.
/// </summary>
internal static class PlotReport
{
    private const int PanelWidth = 520;
    private const int PanelHeight = 360;

    /// <summary>One line or bar group: its name (legend and colour, by its first word), a value per x label (NaN: missing), and whether its line is dashed (else by its last word).</summary>
    public sealed record Series(string Name, IReadOnlyList<double> Values, bool Dashed = false);

    /// <summary>One panel: a title, the y axis label, the x labels in order, the series, and how to draw them.</summary>
    public sealed record Panel(string Title, string YLabel, string XLabel, IReadOnlyList<string> XLabels, IReadOnlyList<Series> Series, bool Bars, bool LogY = false, double? Guide = null);

    public static (IReadOnlyList<string> Pngs, string Note) Write(string folder, ReportData d)
    {
        var plots = Path.Combine(folder, "plots");
        Directory.CreateDirectory(plots);
        var figures = new Dictionary<string, IReadOnlyList<Panel>>();
        foreach (var study in d.Settings.Studies)
        {
            if (StudyPanels(d, study) is { Count: > 0 } panels)
            {
                figures[study.ToString().ToLowerInvariant()] = panels;
            }
        }

        if (d.Settings.Providers.Contains(RunSpec.NativeProvider))
        {
            if (d.Settings.Studies.Contains(Study.Size) && SizeRatioPanels(d) is { Count: > 0 } sizeRatio)
            {
                figures["size-ratio"] = sizeRatio;
            }

            if (RatioPanel(d) is { } ratio)
            {
                figures["ratio"] = [ratio];
            }
        }

        var pngs = new List<string>();
        var failures = new List<string>();
        foreach (var (name, panels) in figures)
        {
            try
            {
                Save(Path.Combine(plots, name + ".png"), panels, name == "ratio" ? Math.Max(640, 110 * panels[0].XLabels.Count * panels[0].Series.Count / 2) : null);
                pngs.Add(name + ".png");
            }
            catch (Exception e) when (e is InvalidOperationException or ArgumentException or IOException or DllNotFoundException or TypeInitializationException)
            {
                failures.Add($"{name}: {e.Message}");
            }
        }

        var version = typeof(Plot).Assembly.GetName().Version?.ToString(3);
        return (pngs, failures.Count == 0 ? $"Plots drawn with ScottPlot {version}." : $"Some plots failed (ScottPlot {version}): {string.Join(" | ", failures)}");
    }

    /// <summary>Saves <paramref name="panels"/> as one PNG, three panels to a row (a single panel <paramref name="width"/> wide when given).</summary>
    public static void Save(string path, IReadOnlyList<Panel> panels, int? width = null)
    {
        var columns = Math.Min(panels.Count, 3);
        var rows = (panels.Count + columns - 1) / columns;
        var multiplot = new Multiplot();
        multiplot.AddPlots(panels.Count);
        multiplot.Layout = new ScottPlot.MultiplotLayouts.Grid(rows, columns);
        for (var i = 0; i < panels.Count; i++)
        {
            Draw(multiplot.GetPlot(i), panels[i]);
        }

        multiplot.SavePng(path, width ?? columns * PanelWidth, rows * PanelHeight);
    }

    private static void Draw(Plot plot, Panel panel)
    {
        plot.Title(panel.Title, 12);
        plot.YLabel(panel.YLabel, 11);
        plot.XLabel(panel.XLabel, 11);
        double Y(double value) => panel.LogY ? Math.Log10(value) : value;
        var slot = panel.Bars ? 0.8 / Math.Max(1, panel.Series.Count) : 0;
        for (var s = 0; s < panel.Series.Count; s++)
        {
            var series = panel.Series[s];
            var color = Color.FromHex(ColorOf(series.Name));
            var xs = new List<double>();
            var ys = new List<double>();
            for (var x = 0; x < panel.XLabels.Count && x < series.Values.Count; x++)
            {
                if (double.IsFinite(series.Values[x]) && (!panel.LogY || series.Values[x] > 0))
                {
                    xs.Add(panel.Bars ? x - 0.4 + (slot * (s + 0.5)) : x);
                    ys.Add(Y(series.Values[x]));
                }
            }

            if (panel.Bars)
            {
                var bars = plot.Add.Bars(xs.Zip(ys, (x, y) => new Bar { Position = x, Value = y, Size = slot * 0.95, FillColor = color }).ToList());
                bars.LegendText = series.Name;
            }
            else
            {
                var line = plot.Add.Scatter(xs.ToArray(), ys.ToArray(), color);
                line.LegendText = series.Name;
                line.LineWidth = 1.5f;
                line.MarkerSize = 6;
                line.LinePattern = series.Dashed ? LinePattern.Dashed : DashOf(series.Name);
            }
        }

        if (panel.Guide is { } guide)
        {
            var level = plot.Add.HorizontalLine(Y(guide), 1, Colors.Gray, LinePattern.Dashed);
            level.LegendText = string.Empty;
        }

        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual(
            [.. Enumerable.Range(0, panel.XLabels.Count).Select(i => (double)i)], [.. panel.XLabels]);
        plot.Axes.SetLimitsX(-0.6, panel.XLabels.Count - 0.4);
        if (panel.LogY)
        {
            var all = panel.Series.SelectMany(s => s.Values).Where(v => double.IsFinite(v) && v > 0).DefaultIfEmpty(1).ToList();
            var (low, high) = ((int)Math.Floor(Math.Log10(all.Min())), (int)Math.Ceiling(Math.Log10(all.Max())));
            plot.Axes.Left.TickGenerator = new ScottPlot.TickGenerators.NumericManual(
                [.. Enumerable.Range(low, high - low + 1).Select(e => (double)e)],
                [.. Enumerable.Range(low, high - low + 1).Select(e => Fmt.Rate(Math.Pow(10, e)))]);
            plot.Axes.SetLimitsY(low, high);
        }
        else
        {
            plot.Axes.AutoScaleY();
            plot.Axes.SetLimitsY(0, Math.Max(plot.Axes.GetLimits().Top, panel.Guide ?? 0) * 1.05);
        }

        plot.ShowLegend(Edge.Bottom);
    }

    private static IReadOnlyList<Panel> StudyPanels(ReportData d, Study study)
    {
        var bars = study is Study.Pragma or Study.Api or Study.Limit;
        var perOp = study == Study.Scale;
        var panels = new List<Panel>();
        foreach (var w in d.Settings.Workloads.Where(w => d.Points(study, w).Count > 0))
        {
            var points = d.Points(study, w);
            var labels = points.OrderBy(p => p.X).Select(p => p.XLabel).Distinct().ToList();
            var series = points.Select(p => p.Series).Distinct().Select(se => new Series(se, [.. labels.Select(label =>
                points.FirstOrDefault(p => p.Series == se && p.XLabel == label) is { } p && d.Find(p.Spec) is { Failed: false, MedianOps: > 0 } r
                    ? (perOp ? r.UsPerOp : r.MedianOps / 1000)
                    : double.NaN)])).ToList();
            var xLabel = study switch
            {
                Study.Size or Study.Scale => "pre-filled blocks",
                Study.Batch => "commit every (writes)",
                Study.Threads => "threads",
                _ => string.Empty,
            };
            panels.Add(new Panel(
                $"{study} study: {WorkloadInfo.Name(w)}",
                perOp ? $"µs per op (median of {d.Settings.Repetitions}; lower is better)" : $"k ops/s (median of {d.Settings.Repetitions})",
                xLabel, labels, series, bars));
        }

        return panels;
    }

    private static IReadOnlyList<Panel> SizeRatioPanels(ReportData d)
    {
        var panels = new List<Panel>();
        foreach (var w in d.Settings.Workloads.Where(w => d.Points(Study.Size, w).Any(p => p.Spec.IsNative)))
        {
            var points = d.Points(Study.Size, w).Where(p => !p.Spec.IsNative).ToList();
            var labels = points.OrderBy(p => p.X).Select(p => p.XLabel).Distinct().ToList();
            var series = points.Select(p => p.Series).Distinct().Select(se => new Series(se, [.. labels.Select(label =>
                points.FirstOrDefault(p => p.Series == se && p.XLabel == label) is { } p && d.Find(p.Spec) is { } r && !double.IsNaN(r.RatioToNative)
                    ? r.RatioToNative
                    : double.NaN)])).ToList();
            panels.Add(new Panel($"Ratio to native C: {WorkloadInfo.Name(w)}", "x native (1 = as fast as C)", "pre-filled blocks", labels, series, Bars: false, Guide: 1));
        }

        return panels;
    }

    private static Panel? RatioPanel(ReportData d)
    {
        var providers = d.Settings.Providers.Where(p => !RunSpec.IsNativeName(p)).ToList();
        var workloads = d.Settings.Workloads.Where(w => providers.Any(p => d.Reference(w, p) is { RatioToNative: > 0 })).ToList();
        if (workloads.Count == 0 || providers.Count == 0)
        {
            return null;
        }

        var series = providers.Select(p => new Series(p, [.. workloads.Select(w => d.Reference(w, p) is { RatioToNative: > 0 } r ? r.RatioToNative : double.NaN)])).ToList();
        return new Panel(
            $"Ratio to the native C baseline, {RunSpec.SizeLabel(d.Settings.RefSize)} rows, reference configuration (1 = as fast as C)",
            "x native", string.Empty, [.. workloads.Select(WorkloadInfo.Name)], series, Bars: true, Guide: 1);
    }

    /// <summary>Dashes: shared connections and the TextHash layout dashed, BlobHash dotted, the rest solid.</summary>
    private static LinePattern DashOf(string series) => series.Split(' ')[^1] switch
    {
        "shared" or "TextHash" => LinePattern.Dashed,
        "BlobHash" => LinePattern.Dotted,
        _ => LinePattern.Solid,
    };

    private static string ColorOf(string series) => series.Split(' ', ',')[0] switch
    {
        "MicrosoftData" => "#1f77b4",
        "SystemData" => "#ff7f0e",
        "PInvoke" => "#2ca02c",
        "Native" => "#000000",
        "NativePlain" => "#7f7f7f",
        _ => "#9467bd",
    };
}
