namespace BlockDb.Bench.Concurrency;

/// <summary>One configuration's figures: medians over repetitions; latency per call in milliseconds.</summary>
internal sealed record ConcurrencyResult(
    string Provider,
    string SqliteVersion,
    SynchronousMode Sync,
    int Callers,
    string Mode,
    int Ops,
    double OpsPerSecond,
    double OpsPerSecondMin,
    double OpsPerSecondMax,
    double P50Ms,
    double P99Ms,
    double MaxMs,
    double WritesPerCommit);
