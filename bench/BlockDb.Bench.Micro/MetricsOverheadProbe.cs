using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Globalization;
using BlockDb.Bench.Execution;
using MathNet.Numerics.Statistics;

namespace BlockDb.Bench.Micro;

/// <summary>
/// The metrics' cost measured interleaved, for a shared, loaded machine where BenchmarkDotNet's one-case-after-another
/// runs drift more than the 3 % to be seen (<c>metrics-overhead [rounds]</c>): one PInvoke session on a KeyMap copy of
/// 100,000 blocks; each round runs 20,000 finds and 20,000 select-xor-insert hits with no listener and with a
/// <see cref="MeterListener"/> on every BlockDb instrument, in alternating order; per round, the ratio of ns per op
/// listening to not, in wall time and in the thread's CPU time (which leaves out waiting for a core), and the bytes
/// allocated per op. Prints each round and the medians.
/// </summary>
internal static class MetricsOverheadProbe
{
    private const int Ops = 20_000;
    private const int Pool = 4096;

    public static int Run(int rounds)
    {
        var folder = Path.Combine(Path.GetTempPath(), "blockdb-micro", $"metrics-probe-{Environment.ProcessId}");
        Directory.CreateDirectory(folder);
        var path = Path.Combine(folder, "probe.db");
        File.Copy(MicroData.Template(100_000, BlockLayout.KeyMap), path, overwrite: true);
        using var database = BlockDatabase.Open(new BlockDbOptions
        {
            Provider = "PInvoke",
            DataSource = path,
            Pragmas = new PragmaOptions { Preset = PragmaPreset.Recommended },
            Batching = new BatchingOptions { CommitEvery = 0, OnDispose = DisposeBehavior.Rollback },
        });
        using var session = database.OpenSessionAsync().GetAwaiter().GetResult();
        var hashes = Enumerable.Range(0, Pool).Select(i => MicroData.Bytes(1, i * (100_000 / Pool))).ToArray();
        long measurements = 0;
        var next = 0;

        (double WallNs, double CpuNs, double Bytes) Measure(bool listening, bool find)
        {
            MeterListener? listener = null;
            if (listening)
            {
                listener = new MeterListener
                {
                    InstrumentPublished = (instrument, l) =>
                    {
                        if (instrument.Meter.Name == BlockDbDiagnostics.Name)
                        {
                            l.EnableMeasurementEvents(instrument);
                        }
                    },
                };
                listener.SetMeasurementEventCallback<long>((_, _, _, _) => measurements++);
                listener.SetMeasurementEventCallback<double>((_, _, _, _) => measurements++);
                listener.Start();
            }

            var bytes = GC.GetAllocatedBytesForCurrentThread();
            var cpu = ThreadCpu.NowNs();
            var wall = Stopwatch.GetTimestamp();
            for (var i = 0; i < Ops; i++)
            {
                var hash = hashes[next++ & (Pool - 1)];
                if (find)
                {
                    session.FindBlockAsync(new BlockKey(hash, MicroData.BlockSize)).GetAwaiter().GetResult();
                }
                else
                {
                    session.SelectXorInsertAsync(new BlockKey(hash, MicroData.BlockSize)).GetAwaiter().GetResult();
                }
            }

            var result = (Stopwatch.GetElapsedTime(wall).TotalNanoseconds / Ops, (ThreadCpu.NowNs() - cpu) / (double)Ops, (GC.GetAllocatedBytesForCurrentThread() - bytes) / (double)Ops);
            listener?.Dispose();
            return result;
        }

        foreach (var find in new[] { true, false })
        {
            Measure(false, find);
            Measure(true, find);
        }

        var culture = CultureInfo.InvariantCulture;
        Console.WriteLine($"metrics overhead, PInvoke KeyMap 1e5, {Ops:N0} ops per case, {rounds} rounds, load average {File.ReadAllText("/proc/loadavg").Split(' ')[0]}");
        foreach (var find in new[] { true, false })
        {
            var name = find ? "FindBlockAsync" : "SelectXorInsertAsync (hit)";
            var wallRatios = new List<double>();
            var cpuRatios = new List<double>();
            var bytesOff = 0.0;
            var bytesOn = 0.0;
            var cpuOff = new List<double>();
            for (var r = 0; r < rounds; r++)
            {
                var listenFirst = r % 2 == 1;
                var first = Measure(listenFirst, find);
                var second = Measure(!listenFirst, find);
                var (on, off) = listenFirst ? (first, second) : (second, first);
                wallRatios.Add(on.WallNs / off.WallNs);
                cpuRatios.Add(on.CpuNs / off.CpuNs);
                cpuOff.Add(off.CpuNs);
                bytesOff = Math.Max(bytesOff, off.Bytes);
                bytesOn = Math.Max(bytesOn, on.Bytes);
                Console.WriteLine(string.Create(culture, $"  {name} round {r + 1}: off {off.WallNs:F0} ns wall / {off.CpuNs:F0} ns CPU, on {on.WallNs:F0} / {on.CpuNs:F0}"));
            }

            Console.WriteLine(string.Create(culture, $"{name}: listening/not, median of {rounds} paired rounds: wall {wallRatios.Median():F3} (p25 {wallRatios.LowerQuartile():F3}, p75 {wallRatios.UpperQuartile():F3}), CPU {cpuRatios.Median():F3} (p25 {cpuRatios.LowerQuartile():F3}, p75 {cpuRatios.UpperQuartile():F3}); CPU per op without listener {cpuOff.Median():F0} ns; bytes per op: off {bytesOff:F2}, on {bytesOn:F2}"));
        }

        Console.WriteLine($"measurements seen: {measurements:N0}");
        session.Dispose();
        database.Dispose();
        Directory.Delete(folder, recursive: true);
        return 0;
    }
}
