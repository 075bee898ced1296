using System.Diagnostics.Metrics;
using BenchmarkDotNet.Attributes;

namespace BlockDb.Bench.Micro;

/// <summary>
/// What BlockDb's metrics cost on the hot path (issue 14's budget: within 3 % of the throughput without a listener, and
/// 0 B/op): find and select-xor-insert of an existing block on PInvoke, KeyMap layout, with no listener on the
/// <c>BlockDb</c> meter and with a <see cref="MeterListener"/> enabling every instrument (as an exporter would). Read
/// the two rows of each benchmark side by side, from one run.
/// </summary>
[MemoryDiagnoser]
public class MetricsOverheadBenchmarks
{
    private const int Pool = 4096;
    private const int Rows = 100_000;
    private IBlockDatabase? _database;
    private IBlockSession? _session;
    private MeterListener? _listener;
    private BlockHash[] _existing = [];
    private string _folder = string.Empty;
    private int _next;
    private long _measurements;

    /// <summary>Whether a listener is subscribed to every BlockDb instrument.</summary>
    [Params(false, true)]
    public bool Listening { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _folder = Path.Combine(Path.GetTempPath(), "blockdb-micro", $"metrics-{Environment.ProcessId}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(_folder);
        var path = Path.Combine(_folder, "bench.db");
        File.Copy(MicroData.Template(Rows, BlockLayout.KeyMap), path);
        if (Listening)
        {
            _listener = new MeterListener
            {
                InstrumentPublished = (instrument, listener) =>
                {
                    if (instrument.Meter.Name == BlockDbDiagnostics.Name)
                    {
                        listener.EnableMeasurementEvents(instrument);
                    }
                },
            };
            _listener.SetMeasurementEventCallback<long>((_, _, _, _) => Interlocked.Increment(ref _measurements));
            _listener.SetMeasurementEventCallback<double>((_, _, _, _) => Interlocked.Increment(ref _measurements));
            _listener.Start();
        }

        _database = BlockDatabase.Open(new BlockDbOptions
        {
            Provider = "PInvoke",
            DataSource = path,
            Pragmas = new PragmaOptions { Preset = PragmaPreset.Recommended },
            Batching = new BatchingOptions { CommitEvery = 0, OnDispose = DisposeBehavior.Rollback },
        });
        _session = _database.OpenSessionAsync().GetAwaiter().GetResult();
        var step = Rows / Pool;
        _existing = [.. Enumerable.Range(0, Pool).Select(i => MicroData.Bytes(1, i * step))];
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _session?.Dispose();
        _database?.Dispose();
        _listener?.Dispose();
        Console.WriteLine($"// measurements seen by the listener: {_measurements}");
        Directory.Delete(_folder, recursive: true);
    }

    [Benchmark]
    public long? FindBinary() => _session!.FindBlockAsync(new BlockKey(_existing[_next++ & (Pool - 1)], MicroData.BlockSize)).GetAwaiter().GetResult();

    [Benchmark]
    public long SelectXorInsertHit() => _session!.SelectXorInsertAsync(new BlockKey(_existing[_next++ & (Pool - 1)], MicroData.BlockSize)).GetAwaiter().GetResult().Id;
}
