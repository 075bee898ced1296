using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using BlockDb.Diagnostics;
using BlockDb.Opening;
using Microsoft.Extensions.Logging;

namespace BlockDb.Tests.Diagnostics;

/// <summary>The observability tests run alone: the BlockDb meter is process-wide, and other tests' calls would count too.</summary>
[CollectionDefinition(nameof(ObservabilityTests), DisableParallelization = true)]
public sealed class ObservabilityCollection;

/// <summary>
/// Metrics, traces and log events (docs/OBSERVABILITY.md), seen as a user's listener sees them: a <see cref="MeterListener"/>
/// on the <c>BlockDb</c> meter, an <see cref="ActivityListener"/> on its source and a logger factory, over real files
/// (and a real server for the PostgreSQL provider). Every figure asserted is one the test caused and can count.
/// </summary>
[Collection(nameof(ObservabilityTests))]
public sealed class ObservabilityTests : IDisposable
{
    private readonly TempFolder _folder = new();
    private readonly MeterListener _meters = new();
    private readonly ActivityListener _activities;
    private readonly ConcurrentQueue<(string Instrument, double Value, Dictionary<string, object?> Tags)> _measurements = new();
    private readonly ConcurrentQueue<Activity> _stopped = new();
    private string? _schema;

    public ObservabilityTests()
    {
        _meters.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == BlockDbDiagnostics.Name)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _meters.SetMeasurementEventCallback<long>((i, v, tags, _) => Record(i, v, tags));
        _meters.SetMeasurementEventCallback<double>((i, v, tags, _) => Record(i, v, tags));
        _meters.Start();
        _activities = new ActivityListener
        {
            ShouldListenTo = source => source.Name == BlockDbDiagnostics.Name,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllData,
            ActivityStopped = _stopped.Enqueue,
        };
        ActivitySource.AddActivityListener(_activities);
    }

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    public void Dispose()
    {
        _meters.Dispose();
        _activities.Dispose();
        _folder.Dispose();
        if (_schema is not null)
        {
            PostgreSqlServer.DropSchema(_schema);
        }
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Calls_commits_and_rollbacks_are_counted_and_a_sixteenth_of_calls_timed(string provider)
    {
        var path = _folder.File("calls.db");
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
        await using var session = await db.OpenSessionAsync();
        for (var i = 0; i < 40; i++)
        {
            await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(i), 4096));
        }

        await session.CommitAsync();
        for (var i = 0; i < 24; i++)
        {
            await session.FindBlockAsync(new BlockKey(TestData.Bytes(i), 4096));
        }

        await Assert.ThrowsAsync<ArgumentException>(async () => await session.FindBlockAsync(default)); // refused inside the call: counted with its error
        await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(1000), 4096));
        await session.RollbackAsync();

        Assert.Equal(41, Count("blockdb.client.operations", ("db.operation.name", "SelectXorInsertAsync"), ("blockdb.provider", provider), ("db.system.name", "sqlite")));
        Assert.Equal(24, Count("blockdb.client.operations", ("db.operation.name", "FindBlockAsync"), ("error.type", null)));
        Assert.Equal(1, Count("blockdb.client.operations", ("db.operation.name", "FindBlockAsync"), ("error.type", typeof(ArgumentException).FullName)));

        // 41 + 1 (commit) + 25 + 1 (rollback) = 68 calls on one session: calls 16, 32, 48 and 64 are timed.
        Assert.Equal(68, Count("blockdb.client.operations"));
        var durations = Values("db.client.operation.duration");
        Assert.Equal(68 / Instruments.DurationSampleInterval, durations.Count);
        Assert.All(durations, d => Assert.InRange(d, 0, 60));

        Assert.Equal([40.0], Values("blockdb.commit.writes"));
        Assert.Equal(1, Count("blockdb.commits"));
        Assert.Single(Values("blockdb.commit.duration"));
        Assert.Equal(1, Count("blockdb.rollbacks", ("blockdb.reason", "requested")));
        Assert.Contains(_stopped, a => a.OperationName == "blockdb.commit" && (int?)a.GetTagItem("blockdb.commit.writes") == 40);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task A_one_call_file_whose_write_fails_after_its_checks_counts_a_write_failed_rollback(string provider)
    {
        var path = _folder.File("write-failed.db");
        await using (var setup = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path }))
        await using (var s = await setup.OpenSessionAsync())
        {
            await s.SelectXorInsertAsync(new BlockKey(TestData.Bytes(1), 666));
            await s.CommitAsync();
        }

        // A foreign index refuses a second block of 666 bytes: the file's insert fails after every check passed.
        using (var foreign = new RawSql(path, provider))
        {
            foreign.Execute("""CREATE UNIQUE INDEX "RefuseBlock" ON "Block" ("Size") WHERE "Size" = 666""");
        }

        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
        await using var session = await db.OpenSessionAsync();
        await Assert.ThrowsAsync<BlockDbBatchRolledBackException>(async () => await session.AddBlocksetAsync(new[] { new BlockKey(TestData.Bytes(2), 666) }, new SelectXorInsertResult[1]));
        Assert.Equal(1, Count("blockdb.rollbacks", ("blockdb.reason", "write-failed"), ("blockdb.provider", provider)));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Gauges_report_the_key_map_rows_and_page_cache_of_each_open_database(string provider)
    {
        var path = _folder.File("gauges.db");
        var other = _folder.File("other.db");
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
        await using var otherDb = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = other, Index = { Layout = BlockLayout.TextHash } });
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = 0; i < 300; i++)
            {
                await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(i), 4096));
            }

            await session.AddBlocksetAsync([1, 2, 3], TestData.Hash(7));
            await session.CommitAsync();
        }

        await using var open = await db.OpenSessionAsync();
        await open.FindBlockAsync(new BlockKey(TestData.Bytes(5), 4096));

        var file = ("db.namespace", (object?)path);
        _meters.RecordObservableInstruments();
        Assert.Equal(300, Last("blockdb.keymap.entries", file));
        Assert.InRange(Last("blockdb.keymap.size", file), 300 * 8, 64L << 20);
        Assert.Empty(Values("blockdb.keymap.entries", ("db.namespace", other))); // TextHash has no map
        Assert.Equal(0, Last("blockdb.group_commit.queue_length", file));

        // Page-cache counters: the closed session's and the open one's, never going down.
        var hits = Values("blockdb.page_cache.hits", file);
        Assert.True(hits.Single() > 0, $"page-cache hits {hits.Single()}");

        // Rows are counted off the collector's thread: the first collection starts the count, a later one reports it.
        var rows = await Eventually(() =>
        {
            _meters.RecordObservableInstruments();
            return Values("blockdb.rows", file, ("blockdb.table", "Block"));
        });
        Assert.Equal(300, rows[^1]);
        Assert.Equal(1, Last("blockdb.rows", file, ("blockdb.table", "Blockset")));
        Assert.Equal(3, Last("blockdb.rows", file, ("blockdb.table", "BlocksetEntry")));
        var otherRows = await Eventually(() =>
        {
            _meters.RecordObservableInstruments();
            return Values("blockdb.rows", ("db.namespace", other), ("blockdb.table", "Block"));
        });
        Assert.Equal(0, otherRows[^1]);

        // A closed database is no longer observed.
        await otherDb.DisposeAsync();
        _measurements.Clear();
        _meters.RecordObservableInstruments();
        Assert.Empty(Values("blockdb.keymap.entries", ("db.namespace", other)));
        Assert.Empty(Values("blockdb.rows", ("db.namespace", other)));
        Assert.NotEmpty(Values("blockdb.keymap.entries", file));
    }

    [Fact]
    public async Task Group_commits_record_their_size_and_the_queue_drains_to_zero()
    {
        var path = _folder.File("group.db");
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = "PInvoke", DataSource = path });
        await using (var shared = db.OpenSharedSession())
        {
            await Task.WhenAll(Enumerable.Range(0, 200).Select(i => shared.SelectXorInsertAsync(new BlockKey(TestData.Bytes(i), 4096)).AsTask()));
        }

        var sizes = Values("blockdb.group_commit.batch_size");
        Assert.Equal(200, sizes.Sum());
        Assert.All(sizes, s => Assert.InRange(s, 1, 200));
        _meters.RecordObservableInstruments();
        Assert.Equal(0, Last("blockdb.group_commit.queue_length", ("db.namespace", path)));
    }

    [Fact]
    public async Task Opening_loading_the_map_checking_importing_and_collecting_are_traced_and_logged()
    {
        var path = _folder.File("traced.db");
        var log = new CapturingLoggerFactory();
        await using (var writer = new BlockDatabaseBuilder(new BlockDbOptions { Provider = "PInvoke", DataSource = path }).UseLoggerFactory(log).Build())
        {
            var imported = await writer.ImportBlocksAsync(Blocks(0, 1000), new ImportOptions { ItemsPerTransaction = 400 });
            Assert.Equal(1000, imported.Created);
            await using var session = await writer.OpenSessionAsync();
            var volume = await session.RegisterVolumeAsync("v1.zip", VolumeState.Uploaded);
            await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(5000), 4096), volume);
            await session.CommitAsync();
            var collected = await session.DeleteUnreferencedBlocksAsync();
            Assert.Equal(1001, collected.Blocks);
            Assert.True((await writer.CheckAsync()).IsClean);
        }

        Assert.Equal(1000, Count("blockdb.import.items", ("blockdb.item", "block"), ("blockdb.result", "created")));
        Assert.Equal(0, Count("blockdb.import.items", ("blockdb.result", "existing")));

        // A second database on the file loads the map in full at its first lookup.
        await using (var reader = new BlockDatabaseBuilder(new BlockDbOptions { Provider = "MicrosoftData", DataSource = path }).UseLoggerFactory(log).Build())
        {
            await using var session = await reader.OpenSessionAsync();
            Assert.Null(await session.FindBlockAsync(new BlockKey(TestData.Bytes(1), 4096)));
        }

        var loads = Values("blockdb.keymap.load.duration", ("blockdb.provider", "MicrosoftData"), ("db.namespace", path));
        Assert.Single(loads);
        var names = _stopped.Select(a => a.OperationName).ToHashSet();
        Assert.Superset(new HashSet<string> { "blockdb.open", "blockdb.import", "blockdb.commit", "blockdb.check", "blockdb.keymap.load" }, names);
        Assert.Equal(2, _stopped.Count(a => a.OperationName == "blockdb.open" && (string?)a.GetTagItem("db.namespace") == path));

        Assert.Equal(2, log.Count(1, "DatabaseOpened"));
        Assert.Contains(log.Messages, m => m.Id == 10 && m.Name == "KeyMapLoaded" && m.Text.Contains(path, StringComparison.Ordinal));
        Assert.Equal(1, log.Count(30, "CheckFinished"));
        Assert.Equal(1, log.Count(40, "ImportFinished"));
        Assert.Equal(1, log.Count(41, "Collected"));
        Assert.Contains(log.Messages, m => m.Id == 41 && m.Text.Contains("1001 unreferenced blocks", StringComparison.Ordinal));
    }

    [PostgresFact]
    public async Task PostgreSql_calls_and_rows_are_measured_with_the_server_system_name()
    {
        var connectionString = PostgreSqlServer.CreateSchema(out _schema);
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = connectionString });
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = 0; i < 20; i++)
            {
                await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(i), 4096));
            }

            await session.CommitAsync();
        }

        await using (var shared = db.OpenSharedSession())
        {
            Assert.NotNull(await shared.FindBlockAsync(new BlockKey(TestData.Bytes(3), 4096)));
        }

        Assert.Equal(20, Count("blockdb.client.operations", ("db.system.name", "postgresql"), ("db.operation.name", "SelectXorInsertAsync")));
        Assert.Equal(1, Count("blockdb.client.operations", ("db.system.name", "postgresql"), ("db.operation.name", "FindBlockAsync")));
        var rows = await Eventually(() =>
        {
            _meters.RecordObservableInstruments();
            return Values("blockdb.rows", ("db.system.name", "postgresql"), ("blockdb.table", "Block"));
        });
        Assert.Equal(20, rows[^1]);
    }

    [PostgresFact]
    public async Task PostgreSql_sessions_log_the_collection_through_the_applications_logger_factory()
    {
        var connectionString = PostgreSqlServer.CreateSchema(out _schema);
        var log = new CapturingLoggerFactory();
        await using var db = new BlockDatabaseBuilder(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = connectionString }).UseLoggerFactory(log).Build();
        await using var session = await db.OpenSessionAsync();
        for (var i = 0; i < 3; i++)
        {
            await session.SelectXorInsertAsync(new BlockKey(TestData.Bytes(i), 4096));
        }

        await session.CommitAsync();
        Assert.Equal(3, (await session.DeleteUnreferencedBlocksAsync()).Blocks);
        Assert.Equal(1, log.Count(41, "Collected"));
        Assert.Contains(log.Messages, m => m.Id == 41 && m.Text.Contains("3 unreferenced blocks", StringComparison.Ordinal));
    }

    private static async IAsyncEnumerable<ImportBlock> Blocks(int from, int count)
    {
        for (var i = from; i < from + count; i++)
        {
            yield return new ImportBlock(new BlockKey(TestData.Bytes(i), 4096));
        }

        await Task.CompletedTask;
    }

    /// <summary>Polls until <paramref name="read"/> returns something (the row count runs in the background), for up to 30 s.</summary>
    private static async Task<List<double>> Eventually(Func<List<double>> read)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var values = read();
            if (values.Count > 0 || clock.Elapsed > TimeSpan.FromSeconds(30))
            {
                return values;
            }

            await Task.Delay(20);
        }
    }

    private void Record(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var copy = new Dictionary<string, object?>();
        foreach (var tag in tags)
        {
            copy[tag.Key] = tag.Value;
        }

        _measurements.Enqueue((instrument.Name, value, copy));
    }

    /// <summary>The values of <paramref name="instrument"/> whose tags match (a null value: the tag is absent).</summary>
    private List<double> Values(string instrument, params (string Key, object? Value)[] tags) =>
        [.. _measurements.Where(m => m.Instrument == instrument && tags.All(t => t.Value is null ? !m.Tags.ContainsKey(t.Key) : Equals(m.Tags.GetValueOrDefault(t.Key), t.Value))).Select(m => m.Value)];

    private long Count(string instrument, params (string Key, object? Value)[] tags) => (long)Values(instrument, tags).Sum();

    private long Last(string instrument, params (string Key, object? Value)[] tags)
    {
        var values = Values(instrument, tags);
        Assert.True(values.Count > 0, $"no measurement of {instrument}");
        return (long)values[^1];
    }
}
