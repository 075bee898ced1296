namespace BlockDb;

/// <summary>
/// The names to listen to for BlockDb's metrics and traces: one <see cref="System.Diagnostics.Metrics.Meter"/> and one
/// <see cref="System.Diagnostics.ActivitySource"/>, both named <see cref="Name"/> (for example
/// <c>dotnet-counters monitor --counters BlockDb</c>, or OpenTelemetry's <c>AddMeter("BlockDb")</c> and
/// <c>AddSource("BlockDb")</c>). docs/OBSERVABILITY.md lists every instrument.
/// </summary>
public static class BlockDbDiagnostics
{
    /// <summary>The meter's and the activity source's name: <c>BlockDb</c>.</summary>
    public const string Name = "BlockDb";
}
