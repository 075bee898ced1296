using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Reflection;

namespace BlockDb.Diagnostics;

/// <summary>
/// BlockDb's metrics and traces: the <see cref="Meter"/> and <see cref="ActivitySource"/> named
/// <see cref="BlockDbDiagnostics.Name"/>, shared by the engine and every provider, so one listener sees them all.
/// Every instrument is documented in docs/OBSERVABILITY.md. Recording costs nothing measurable while no listener is
/// subscribed (each instrument's <c>Enabled</c> is checked first) and allocates nothing when one is.
/// </summary>
/// <remarks>
/// Attribute names follow OpenTelemetry's database client conventions where they fit
/// (<see href="https://opentelemetry.io/docs/specs/semconv/database/database-metrics/"/>): <c>db.system.name</c>
/// (<c>sqlite</c> or <c>postgresql</c>), <c>db.operation.name</c> (the BlockDb call, e.g. <c>SelectXorInsertAsync</c>),
/// <c>error.type</c> (the exception type of a failed call); BlockDb adds <c>blockdb.provider</c>.
/// </remarks>
internal static class Instruments
{
    private static readonly string? Version = typeof(Instruments).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
    private static readonly ConcurrentDictionary<IBlockDbObservable, byte> Observed = new();

    /// <summary>The meter, <c>BlockDb</c>.</summary>
    public static Meter Meter { get; } = new(BlockDbDiagnostics.Name, Version);

    /// <summary>The activity source, <c>BlockDb</c>: open, commit, key-map load, check, repair, collection, import, conversion (never one per block).</summary>
    public static ActivitySource ActivitySource { get; } = new(BlockDbDiagnostics.Name, Version);

    /// <summary><c>blockdb.client.operations</c>: calls of sessions and shared sessions, by operation, provider and (when failed) error type.</summary>
    public static Counter<long> Operations { get; } = Meter.CreateCounter<long>("blockdb.client.operations", "{operation}", "BlockDb calls, by operation (db.operation.name), provider and, for failed calls, error.type.");

    /// <summary>
    /// <c>db.client.operation.duration</c> in seconds: one call in <see cref="DurationSampleInterval"/> is timed (the
    /// others are counted only), so the hot path pays for a clock read rarely.
    /// </summary>
    public static Histogram<double> OperationDuration { get; } = Meter.CreateHistogram(
        "db.client.operation.duration",
        "s",
        $"Duration of BlockDb calls in seconds; one call in {DurationSampleInterval} is timed.",
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.000_001, 0.000_002, 0.000_005, 0.000_01, 0.000_02, 0.000_05, 0.000_1, 0.000_5, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5] });

    /// <summary><c>blockdb.commits</c>: transactions committed by sessions (batches) and the shared session's group commits.</summary>
    public static Counter<long> Commits { get; } = Meter.CreateCounter<long>("blockdb.commits", "{commit}", "Write transactions committed.");

    /// <summary><c>blockdb.commit.duration</c> in seconds: the <c>COMMIT</c> statement (the durable write).</summary>
    public static Histogram<double> CommitDuration { get; } = Meter.CreateHistogram<double>("blockdb.commit.duration", "s", "Duration of COMMIT in seconds.");

    /// <summary><c>blockdb.commit.writes</c>: writes per committed transaction (the commit batch's size).</summary>
    public static Histogram<long> CommitWrites { get; } = Meter.CreateHistogram<long>("blockdb.commit.writes", "{write}", "Writes in each committed transaction.");

    /// <summary><c>blockdb.rollbacks</c>: transactions rolled back, by <c>blockdb.reason</c> (<c>requested</c>, <c>failed</c>: a failed commit, <c>lost</c>: rolled back by the engine).</summary>
    public static Counter<long> Rollbacks { get; } = Meter.CreateCounter<long>("blockdb.rollbacks", "{rollback}", "Write transactions rolled back, by blockdb.reason.");

    /// <summary><c>blockdb.group_commit.batch_size</c>: writes per group commit of a shared session.</summary>
    public static Histogram<long> GroupCommitBatchSize { get; } = Meter.CreateHistogram<long>("blockdb.group_commit.batch_size", "{write}", "Writes gathered into each group commit.");

    /// <summary><c>blockdb.keymap.load.duration</c> in seconds: a full read of the Block table into the KeyMap layout's map.</summary>
    public static Histogram<double> KeyMapLoadDuration { get; } = Meter.CreateHistogram<double>("blockdb.keymap.load.duration", "s", "Duration of a full key-map load in seconds.");

    /// <summary><c>blockdb.import.items</c>: bulk-import items, by <c>blockdb.item</c> (<c>block</c>, <c>blockset</c>) and <c>blockdb.result</c> (<c>created</c>, <c>existing</c>).</summary>
    public static Counter<long> ImportItems { get; } = Meter.CreateCounter<long>("blockdb.import.items", "{item}", "Bulk-import items committed, by kind and result.");

    /// <summary>How many calls share one timed call in <see cref="OperationDuration"/>.</summary>
    public const int DurationSampleInterval = 16;

    static Instruments()
    {
        Meter.CreateObservableGauge("blockdb.keymap.entries", () => Observe(static (o, m) => o.ObserveKeyMap(m, bytes: false)), "{entry}", "Entries in the KeyMap layout's in-memory map, per open database.");
        Meter.CreateObservableGauge("blockdb.keymap.size", () => Observe(static (o, m) => o.ObserveKeyMap(m, bytes: true)), "By", "Memory held by the KeyMap layout's map, in bytes, per open database.");
        Meter.CreateObservableUpDownCounter("blockdb.group_commit.queue_length", () => Observe(static (o, m) => o.ObserveQueue(m)), "{write}", "Writes waiting in shared sessions' queues.");
        Meter.CreateObservableCounter("blockdb.page_cache.hits", () => Observe(static (o, m) => o.ObservePageCache(m, hits: true)), "{page}", "SQLite page-cache hits of open sessions (providers that expose them).");
        Meter.CreateObservableCounter("blockdb.page_cache.misses", () => Observe(static (o, m) => o.ObservePageCache(m, hits: false)), "{page}", "SQLite page-cache misses of open sessions (providers that expose them).");
        Meter.CreateObservableGauge("blockdb.rows", () => Observe(static (o, m) => o.ObserveRows(m)), "{row}", "Rows per table (blockdb.table), read at most once a minute per database.");
    }

    /// <summary>Makes an open database's gauges observable until <see cref="Unregister"/>.</summary>
    /// <param name="database">The database.</param>
    public static void Register(IBlockDbObservable database) => Observed.TryAdd(database, 0);

    /// <summary>Stops observing a database (at its dispose).</summary>
    /// <param name="database">The database.</param>
    public static void Unregister(IBlockDbObservable database) => Observed.TryRemove(database, out _);

    /// <summary>The tags of one call: system, provider, operation.</summary>
    /// <param name="system"><c>sqlite</c> or <c>postgresql</c>.</param>
    /// <param name="provider">The provider name.</param>
    /// <param name="operation">The call's name.</param>
    /// <returns>The tags.</returns>
    public static TagList CallTags(string system, string provider, string operation) =>
        new() { { "db.system.name", system }, { "blockdb.provider", provider }, { "db.operation.name", operation } };

    /// <summary>The tags of one open database's measurements: system, provider, and <c>db.namespace</c> (the SQLite file's path, or the PostgreSQL database and schema).</summary>
    /// <param name="system"><c>sqlite</c> or <c>postgresql</c>.</param>
    /// <param name="provider">The provider name.</param>
    /// <param name="database">The file's path, or the server database and schema.</param>
    /// <returns>The tags.</returns>
    public static TagList DatabaseTags(string system, string provider, string database) =>
        new() { { "db.system.name", system }, { "blockdb.provider", provider }, { "db.namespace", database } };

    /// <summary>
    /// At a call's start: a timestamp when this call is the one in <see cref="DurationSampleInterval"/> to time (and a
    /// listener is subscribed to <see cref="OperationDuration"/>), else 0. Pass it to <see cref="EndCall"/>.
    /// </summary>
    /// <param name="calls">The caller's call counter (advanced only while the histogram is enabled).</param>
    /// <returns>The start timestamp, or 0.</returns>
    public static long StartCall(ref int calls) =>
        OperationDuration.Enabled && Interlocked.Increment(ref calls) % DurationSampleInterval == 0 ? Stopwatch.GetTimestamp() : 0;

    /// <summary>At a call's end: counts it, and records its duration when <paramref name="started"/> is not 0.</summary>
    /// <param name="system"><c>sqlite</c> or <c>postgresql</c>.</param>
    /// <param name="provider">The provider name.</param>
    /// <param name="operation">The call's name.</param>
    /// <param name="started">From <see cref="StartCall"/>.</param>
    /// <param name="failure">The failure, or <see langword="null"/>.</param>
    public static void EndCall(string system, string provider, string operation, long started, Exception? failure)
    {
        if (started == 0 && !Operations.Enabled)
        {
            return;
        }

        var tags = CallTags(system, provider, operation);
        if (started != 0)
        {
            OperationDuration.Record(Stopwatch.GetElapsedTime(started).TotalSeconds, tags);
        }

        CountCall(tags, failure);
    }

    /// <summary>Starts a span of whole-database work (open, check, repair) carrying the database's tags, or null when no one listens.</summary>
    /// <param name="name">The span's name, e.g. <c>blockdb.open</c>.</param>
    /// <param name="tags">From <see cref="DatabaseTags"/>.</param>
    /// <returns>The started activity, or <see langword="null"/>.</returns>
    public static Activity? StartActivity(string name, in TagList tags)
    {
        var activity = ActivitySource.StartActivity(name);
        if (activity is not null)
        {
            foreach (var tag in tags)
            {
                activity.SetTag(tag.Key, tag.Value);
            }
        }

        return activity;
    }

    /// <summary>Counts one call (and its error type when it failed).</summary>
    /// <param name="tags">From <see cref="CallTags"/>.</param>
    /// <param name="failure">The failure, or <see langword="null"/>.</param>
    public static void CountCall(TagList tags, Exception? failure)
    {
        if (failure is not null)
        {
            tags.Add("error.type", failure.GetType().FullName);
        }

        Operations.Add(1, tags);
    }

    private static IEnumerable<Measurement<long>> Observe(Action<IBlockDbObservable, List<Measurement<long>>> observe)
    {
        var measurements = new List<Measurement<long>>();
        foreach (var database in Observed.Keys)
        {
            observe(database, measurements);
        }

        return measurements;
    }
}
