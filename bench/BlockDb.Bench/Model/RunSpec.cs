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
/// <param name="Layout">The block layout of the file (<c>BlockDb:Index:Layout</c>).</param>
/// <param name="Reads">
/// <c>BlockDb:Batching:ReadsPerTransaction</c> (1 = read batching off); <see langword="null"/> = BlockDb's default
/// (256 in WAL mode, 1 otherwise). The C same-design baseline mirrors it; the plain limit has none.
/// </param>
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
    BlockLayout Layout = BlockLayout.TextHash,
    int? Reads = null)
{
    /// <summary>The provider name of the C baseline that runs BlockDb's own design for the layout (<c>--mode same</c>).</summary>
    public const string NativeProvider = "Native";

    /// <summary>The provider name of the C plain limit: the same statements with no transaction bookkeeping (<c>--mode plain</c>).</summary>
    public const string NativePlainProvider = "NativePlain";

    /// <summary>The two C baselines, in display order.</summary>
    public static readonly IReadOnlyList<string> NativeProviders = [NativeProvider, NativePlainProvider];

    /// <summary>Whether this runs the C program (either baseline).</summary>
    public bool IsNative => IsNativeName(Provider);

    /// <summary>Whether this runs the C plain limit.</summary>
    public bool IsPlain => Provider == NativePlainProvider;

    /// <summary>Whether a provider name is one of the C baselines.</summary>
    /// <param name="provider">The provider name.</param>
    /// <returns><see langword="true"/> for <c>Native</c> and <c>NativePlain</c>.</returns>
    public static bool IsNativeName(string provider) => provider is NativeProvider or NativePlainProvider;

    /// <summary>The same configuration on another provider.</summary>
    /// <param name="provider">The provider.</param>
    /// <returns>The spec.</returns>
    public RunSpec WithProvider(string provider) => this with { Provider = provider };

    /// <summary>The configuration without the provider (the key providers are compared on).</summary>
    public string ConfigKey => string.Create(
        CultureInfo.InvariantCulture,
        $"{WorkloadInfo.Name(Workload)}|{Size}|{Pragma}|{BatchLabel(Batch)}|{Threads}|{Connections}|{Api}|{Ops}|{Warmup}|{Layout}|{ReadsLabel(Reads)}");

    /// <summary>
    /// The configuration without the provider and the read-batching setting: specs that share it run interleaved
    /// (rep 1 of each, then rep 2, …), so a read-batching variant is measured side by side with the others.
    /// </summary>
    public string GroupKey => (this with { Reads = null }).ConfigKey;

    /// <summary>A ReadsPerTransaction value for display: <c>default</c> for BlockDb's default.</summary>
    /// <param name="reads">The value.</param>
    /// <returns>The label.</returns>
    public static string ReadsLabel(int? reads) => reads is { } r ? r.ToString(CultureInfo.InvariantCulture) : "default";

    /// <summary>A batch size for display: <c>all</c> for one transaction.</summary>
    /// <param name="batch">The batch size.</param>
    /// <returns>The label.</returns>
    public static string BatchLabel(int batch) => batch == 0 ? "all" : batch.ToString(CultureInfo.InvariantCulture);

    /// <summary>A batch size in words: <c>commit every N writes</c>, or <c>one transaction per run</c>.</summary>
    /// <param name="batch">The batch size.</param>
    /// <returns>The phrase.</returns>
    public static string BatchPhrase(int batch) => batch == 0 ? "one transaction per run" : $"commit every {BatchLabel(batch)} writes";

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
        $"{WorkloadInfo.Name(Workload)} {Provider} size={SizeLabel(Size)} pragma={Pragma} batch={BatchLabel(Batch)} threads={Threads}{(Threads > 1 ? "/" + Connections : string.Empty)} api={Api}{(Layout == BlockLayout.TextHash ? string.Empty : " layout=" + Layout)}{(Reads is null ? string.Empty : " reads=" + ReadsLabel(Reads))}");
}
