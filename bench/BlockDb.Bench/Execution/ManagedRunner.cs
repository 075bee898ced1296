using BlockDb.Bench.Data;
using BlockDb.Bench.Model;
using BlockDb.Drivers;
using BlockDb.Opening;
using BlockDb.Sql;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Runs one repetition on a .NET provider: opens the fresh copy through <see cref="BlockDatabase.Open(BlockDbOptions, Microsoft.Extensions.Logging.ILoggerFactory?)"/>
/// and one session per thread (or one shared session), all untimed; each thread warms up on its slice of the
/// warm-up data, then all start together and run their slice of the timed data to the final commit.
/// </summary>
internal sealed class ManagedRunner(int latencyGroup)
{
    /// <summary>busy_timeout floor when several writer connections compete for SQLite's single write lock.</summary>
    public const int MultiWriterBusyTimeoutMs = 60_000;

    public static BlockDbOptions Options(RunSpec spec, string dbPath) => new()
    {
        Provider = spec.Provider,
        DataSource = dbPath,
        Pragmas = PragmaSet.Get(spec.Pragma).Create(spec.Threads > 1 && spec.Connections == ConnectionMode.PerThread ? MultiWriterBusyTimeoutMs : 0),
        Batching = new BatchingOptions { CommitEvery = spec.Batch, OnDispose = DisposeBehavior.Commit, ReadsPerTransaction = spec.Reads },
        SelectXorInsert = WorkloadInfo.Strategy(spec.Workload),
        Index = new IndexOptions { Layout = spec.Layout },
    };

    public RepetitionResult Run(RunSpec spec, int repetition, WorkloadData data, string dbPath)
    {
        var result = new RepetitionResult { Spec = spec, Repetition = repetition };
        var options = Options(spec, dbPath);
        using var db = BlockDatabase.Open(options);
        result.SqliteVersion = db.EngineVersion;
        if (spec.Api == ApiPath.Driver)
        {
            RunDriver(spec, data, options, result);
            return result;
        }

        if (spec.Workload == Workload.Import)
        {
            ImportRun.Run(spec, db, data.Timed, new LatencyRecorder(data.Timed.Hashes.Length, latencyGroup), result);
            return result;
        }

        var sessions = new List<IBlockSession>();
        try
        {
            for (var t = 0; t < (spec.Connections == ConnectionMode.PerThread ? spec.Threads : 1); t++)
            {
                sessions.Add(db.OpenSessionAsync().GetAwaiter().GetResult());
            }

            var shared = spec.Connections == ConnectionMode.Shared ? new LockedRepository(sessions[0]) : null;
            IBlockSession SessionOf(int t) => shared ?? sessions[t];
            var recorders = Enumerable.Range(0, spec.Threads).Select(_ => new LatencyRecorder(data.Timed.Hashes.Length + data.Timed.Units, latencyGroup)).ToArray();
            var tallies = new Tally[spec.Threads];
            var sqlite = db as ISqliteBlockDatabase;
            SqliteCacheStats? cacheBefore = null;
            GcQuiesce();
            var error = WorkerThreads.Run(
                spec.Threads,
                t =>
                {
                    var (from, to) = data.Warmup.Slice(t, spec.Threads);
                    Loop(spec, SessionOf(t), data.Warmup, from, to, new LatencyRecorder(data.Warmup.Hashes.Length + data.Warmup.Units, latencyGroup));
                },
                t =>
                {
                    var (from, to) = data.Timed.Slice(t, spec.Threads);
                    tallies[t] = Loop(spec, SessionOf(t), data.Timed, from, to, recorders[t]);
                },
                betweenPhases: () => cacheBefore = sqlite?.ReadCacheStats()); // every session idle: each is read now
            if (error is not null)
            {
                throw new InvalidOperationException($"A worker failed: {error.Message}", error);
            }

            // Read before the counts below, so the timed region's page-cache counters are the timed region's alone.
            result.Cache = sqlite?.ReadCacheStats() is { } cacheAfter && cacheBefore is { } start ? cacheAfter.Since(start) : null;
            result.ElapsedNs = WorkerThreads.WallNs(recorders);
            result.CpuNs = recorders.Sum(r => r.CpuNs);
            result.Ops = tallies.Sum(t => t.Ops);
            result.Units = tallies.Sum(t => t.Units);
            result.Created = tallies.Sum(t => t.Created);
            result.Digest = spec.Threads == 1 ? tallies[0].Digest : 0;
            result.LatenciesNs = [.. recorders.SelectMany(r => r.SamplesNs())];
            result.Counts = sessions[0].GetCountsAsync().GetAwaiter().GetResult();
            result.AppliedPragmas = sqlite?.AppliedPragmas.ToString() ?? string.Empty;
            result.KeyMapBytes = sqlite?.KeyMapUsage.Bytes ?? 0;
            return result;
        }
        finally
        {
            foreach (var session in sessions)
            {
                session.Dispose();
            }
        }
    }

    /// <summary>Collects garbage before the timed region, so earlier runs' garbage is not collected inside it.</summary>
    public static void GcQuiesce()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }

    private static Tally Loop(RunSpec spec, IBlockSession session, BlockStream data, int from, int to, LatencyRecorder recorder)
    {
        if (spec.Api == ApiPath.Sync)
        {
            return SyncLoops.Run(spec.Workload, session, data, from, to, recorder);
        }

        var run = AsyncLoops.Run(spec.Workload, session, data, from, to, recorder);
        return run.IsCompletedSuccessfully ? run.Result : run.AsTask().GetAwaiter().GetResult();
    }

    private void RunDriver(RunSpec spec, WorkloadData data, BlockDbOptions options, RepetitionResult result)
    {
        if (spec.Threads != 1)
        {
            throw new NotSupportedException("The driver-level loop runs on one thread.");
        }

        var requested = BlockDb.Sqlite.Pragmas.Resolve(options.Pragmas);
        using var connection = ProviderCatalog.SqliteDriver(spec.Provider).Open(new SqliteOpenOptions(options.DataSource!, SqliteOpenMode.ReadWrite, requested.BusyTimeout ?? 0));
        foreach (var sql in PragmaSql.For(requested))
        {
            connection.Execute(sql);
        }

        result.AppliedPragmas = PragmaSql.Parse(name => connection.QueryText("PRAGMA " + name)).ToString();
        using var loops = new DriverLoops(connection, spec.Batch);
        loops.Run(spec.Workload, data.Warmup, 0, data.Warmup.Units, new LatencyRecorder(data.Warmup.Units, latencyGroup));
        var recorder = new LatencyRecorder(data.Timed.Units, latencyGroup);
        GcQuiesce();
        var tally = loops.Run(spec.Workload, data.Timed, 0, data.Timed.Units, recorder);
        result.ElapsedNs = WorkerThreads.WallNs([recorder]);
        result.CpuNs = recorder.CpuNs;
        result.Ops = tally.Ops;
        result.Created = tally.Created;
        result.Digest = tally.Digest;
        result.LatenciesNs = recorder.SamplesNs();
        using var counts = connection.Prepare(BlockDbSql.Counts);
        counts.Step();
        result.Counts = new BlockDbCounts(counts.ColumnInt64(0), counts.ColumnInt64(1), counts.ColumnInt64(2));
        counts.Reset();
    }
}
