using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using BlockDb.Backup.Cli;
using MathNet.Numerics.Statistics;

namespace BlockDb.Backup.Output;

/// <summary>
/// A short summary of BlockDb's metrics over one run, from the <c>BlockDb</c> meter (docs/OBSERVABILITY.md) through a
/// <see cref="MeterListener"/>: what an engine would export to OpenTelemetry, printed as one table at the end.
/// </summary>
internal sealed class MetricsSummary : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _calls = new(StringComparer.Ordinal);
    private readonly ConcurrentQueue<double> _callSeconds = new();
    private readonly ConcurrentQueue<double> _commitSeconds = new();
    private readonly ConcurrentQueue<double> _commitWrites = new();
    private readonly ConcurrentQueue<double> _groupCommits = new();
    private readonly ConcurrentDictionary<string, long> _gauges = new(StringComparer.Ordinal);
    private long _rollbacks;
    private long _failedCalls;
    private double _mapLoadSeconds;

    private MetricsSummary()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == BlockDbDiagnostics.Name)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => OnLong(instrument.Name, value, tags));
        _listener.SetMeasurementEventCallback<double>((instrument, value, _, _) => OnDouble(instrument.Name, value));
        _listener.Start();
    }

    /// <summary>Starts listening (before the database opens, so its open and key-map load are seen).</summary>
    public static MetricsSummary Start() => new();

    /// <summary>Reads the gauges of the databases still open, then prints the table.</summary>
    public void Write()
    {
        _listener.RecordObservableInstruments();
        var table = new ReportTable("BlockDb metrics (meter 'BlockDb'; docs/OBSERVABILITY.md)", "metric", "value");
        var calls = _calls.OrderByDescending(c => c.Value).ToList();
        table.Row("calls", $"{ReportTable.Count(calls.Sum(c => c.Value))} ({string.Join(", ", calls.Take(4).Select(c => $"{c.Key} {ReportTable.Count(c.Value)}"))}); {ReportTable.Count(_failedCalls)} failed");
        table.Row("call duration (1 in 16 timed)", Quantiles(_callSeconds, 1e6, "µs"));
        table.Row("commits", $"{ReportTable.Count(_commitSeconds.Count)}, {Quantiles(_commitSeconds, 1e3, "ms")}, writes per commit {Mean(_commitWrites)}");
        table.Row("rollbacks", ReportTable.Count(_rollbacks));
        if (!_groupCommits.IsEmpty)
        {
            table.Row("group commits", $"{ReportTable.Count(_groupCommits.Count)}, writes per group commit {Mean(_groupCommits)}");
        }

        if (_gauges.TryGetValue("blockdb.keymap.entries", out var entries))
        {
            table.Row("key map", $"{ReportTable.Count(entries)} entries, {ByteSize.Format(_gauges.GetValueOrDefault("blockdb.keymap.size"))}, longest full load {ReportTable.Number(_mapLoadSeconds * 1e3, "N0")} ms");
        }

        var hits = _gauges.GetValueOrDefault("blockdb.page_cache.hits");
        var misses = _gauges.GetValueOrDefault("blockdb.page_cache.misses");
        table.Row("page cache (sessions)", hits + misses == 0
            ? "not exposed by this provider, or no session open"
            : $"{ReportTable.Count(hits)} hits, {ReportTable.Count(misses)} misses ({ReportTable.Number(100.0 * hits / (hits + misses), "F1")} % hits)");
        table.Write();
    }

    public void Dispose() => _listener.Dispose();

    private static string Quantiles(ConcurrentQueue<double> seconds, double scale, string unit)
    {
        if (seconds.IsEmpty)
        {
            return "none";
        }

        var values = seconds.Select(s => s * scale).ToArray();
        return $"p50 {ReportTable.Number(Statistics.Quantile(values, 0.5), "N1")} {unit}, p99 {ReportTable.Number(Statistics.Quantile(values, 0.99), "N1")} {unit}, max {ReportTable.Number(values.Max(), "N1")} {unit}";
    }

    private static string Mean(ConcurrentQueue<double> values) => values.IsEmpty ? "-" : ReportTable.Number(values.Mean(), "N1");

    private void OnLong(string instrument, long value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        switch (instrument)
        {
            case "blockdb.client.operations":
                string? operation = null;
                var failed = false;
                foreach (var tag in tags)
                {
                    operation = tag.Key == "db.operation.name" ? tag.Value as string : operation;
                    failed |= tag.Key == "error.type";
                }

                _calls.AddOrUpdate(operation ?? "?", value, (_, n) => n + value);
                if (failed)
                {
                    Interlocked.Add(ref _failedCalls, value);
                }

                break;
            case "blockdb.commit.writes":
                _commitWrites.Enqueue(value);
                break;
            case "blockdb.rollbacks":
                Interlocked.Add(ref _rollbacks, value);
                break;
            case "blockdb.group_commit.batch_size":
                _groupCommits.Enqueue(value);
                break;
            case "blockdb.keymap.entries" or "blockdb.keymap.size" or "blockdb.page_cache.hits" or "blockdb.page_cache.misses":
                // One measurement per open database; this tool opens one.
                _gauges[instrument] = value;
                break;
        }
    }

    private void OnDouble(string instrument, double value)
    {
        switch (instrument)
        {
            case "db.client.operation.duration":
                _callSeconds.Enqueue(value);
                break;
            case "blockdb.commit.duration":
                _commitSeconds.Enqueue(value);
                break;
            case "blockdb.keymap.load.duration":
                _mapLoadSeconds = Math.Max(_mapLoadSeconds, value);
                break;
        }
    }
}
