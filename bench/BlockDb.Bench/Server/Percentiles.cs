namespace BlockDb.Bench.Server;

/// <summary>Throughput and latency percentiles of one measured run (latencies in microseconds).</summary>
/// <param name="Ops">Operations (blocks, files or writes, as the workload says).</param>
/// <param name="Seconds">Wall time.</param>
/// <param name="P50">Median latency per operation, µs.</param>
/// <param name="P99">99th percentile, µs.</param>
/// <param name="Max">Slowest operation, µs.</param>
internal sealed record Percentiles(long Ops, double Seconds, double P50, double P99, double Max)
{
    public double PerSecond => Ops / Seconds;

    public static Percentiles Of(long ops, double seconds, List<double> latenciesUs)
    {
        latenciesUs.Sort();
        double At(double q) => latenciesUs.Count == 0 ? 0 : latenciesUs[Math.Min(latenciesUs.Count - 1, (int)(q * latenciesUs.Count))];
        return new Percentiles(ops, seconds, At(0.50), At(0.99), latenciesUs.Count == 0 ? 0 : latenciesUs[^1]);
    }

    public string Row(string name) =>
        $"| {name} | {PerSecond:N0} | {P50:N0} | {P99:N0} | {Max:N0} |";
}
