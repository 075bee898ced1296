using System.Globalization;

namespace BlockDb.Bench.Model;

/// <summary>
/// One configuration to measure: a provider running a workload on a fresh copy of a pre-filled database.
/// Specs are value-equal, so a configuration shared by several studies is run once.
/// </summary>
/// <param name="Provider">MicrosoftData, SystemData, PInvoke or Native.</param>
/// <param name="Workload">The workload.</param>
/// <param name="Size">Blocks in the pre-filled database.</param>
/// <param name="Pragma">The pragma set name.</param>
/// <param name="Batch">Commit every this many writes; 0 = one transaction for the whole run.</param>
/// <param name="Threads">Worker threads.</param>
/// <param name="Connections">Per-thread sessions or one shared session behind a lock.</param>
/// <param name="Api">The call path.</param>
/// <param name="Ops">Timed operations.</param>
/// <param name="Warmup">Untimed operations before the timed region, on the same fresh copy.</param>
public sealed record RunSpec(
    string Provider,
    Workload Workload,
    long Size,
    string Pragma,
    int Batch,
    int Threads,
    ConnectionMode Connections,
    ApiPath Api,
    int Ops,
    int Warmup,
    BlockLayout Layout = BlockLayout.TextHash)
{
    /// <summary>The provider name of the C baseline.</summary>
    public const string NativeProvider = "Native";

    /// <summary>Whether this runs the C baseline.</summary>
    public bool IsNative => Provider == NativeProvider;

    /// <summary>The same configuration on another provider.</summary>
    /// <param name="provider">The provider.</param>
    /// <returns>The spec.</returns>
    public RunSpec WithProvider(string provider) => this with { Provider = provider };

    /// <summary>The configuration without the provider (the key providers are compared on).</summary>
    public string ConfigKey => string.Create(
        CultureInfo.InvariantCulture,
        $"{WorkloadInfo.Name(Workload)}|{Size}|{Pragma}|{BatchLabel(Batch)}|{Threads}|{Connections}|{Api}|{Ops}|{Warmup}|{Layout}");

    /// <summary>A batch size for display: <c>all</c> for one transaction.</summary>
    /// <param name="batch">The batch size.</param>
    /// <returns>The label.</returns>
    public static string BatchLabel(int batch) => batch == 0 ? "all" : batch.ToString(CultureInfo.InvariantCulture);

    /// <summary>A size for display: <c>1e6</c> for powers of ten, else the number.</summary>
    /// <param name="size">The size.</param>
    /// <returns>The label.</returns>
    public static string SizeLabel(long size)
    {
        var exponent = 0;
        var v = size;
        while (v >= 10 && v % 10 == 0)
        {
            v /= 10;
            exponent++;
        }

        return v == 1 && exponent > 0
            ? string.Create(CultureInfo.InvariantCulture, $"1e{exponent}")
            : size.ToString(CultureInfo.InvariantCulture);
    }

    /// <inheritdoc />
    public override string ToString() => string.Create(
        CultureInfo.InvariantCulture,
        $"{WorkloadInfo.Name(Workload)} {Provider} size={SizeLabel(Size)} pragma={Pragma} batch={BatchLabel(Batch)} threads={Threads}{(Threads > 1 ? "/" + Connections : string.Empty)} api={Api}{(Layout == BlockLayout.TextHash ? string.Empty : " layout=" + Layout)}");
}
