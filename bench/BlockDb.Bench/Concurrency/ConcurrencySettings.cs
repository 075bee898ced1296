namespace BlockDb.Bench.Concurrency;

/// <summary>What the concurrency study runs: seed 002's question (1 to 1,000 concurrent inserts) per provider and synchronous mode.</summary>
internal sealed record ConcurrencySettings(
    IReadOnlyList<string> Providers,
    IReadOnlyList<int> Callers,
    IReadOnlyList<SynchronousMode> SyncModes,
    int GroupedOps,
    int BaselineOps,
    int Repetitions,
    string OutputFolder,
    bool Plots)
{
    public static ConcurrencySettings Quick(string output) =>
        new(["MicrosoftData", "SystemData", "PInvoke"], [1, 10, 100, 1000], [SynchronousMode.Normal, SynchronousMode.Full], 20_000, 4_000, 3, output, true);

    public static ConcurrencySettings Smoke(string output) =>
        new(["MicrosoftData", "SystemData", "PInvoke"], [1, 50], [SynchronousMode.Normal], 1_000, 200, 1, output, false);
}
