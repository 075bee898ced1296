using System.Diagnostics;
using System.Globalization;
using System.Runtime;
using System.Runtime.InteropServices;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;
using BlockDb.Opening;

namespace BlockDb.Bench.Reporting;

/// <summary>The machine and runtime description printed beside every figure.</summary>
/// <param name="Entries">Name and value pairs, in display order.</param>
internal sealed record MachineInfo(IReadOnlyList<KeyValuePair<string, string>> Entries)
{
    public static MachineInfo Collect(IEnumerable<string> providers, NativeBuild? native)
    {
        var list = new List<KeyValuePair<string, string>>();
        void Add(string key, string value) => list.Add(new(key, value));

        Add("CPU", CpuModel());
        Add("Cores", Environment.ProcessorCount.ToString(CultureInfo.InvariantCulture) + " logical");
        Add("RAM", MemTotal());
        Add("OS", $"{OsRelease()} ({RuntimeInformation.OSDescription.Trim()}, {RuntimeInformation.OSArchitecture})");
        Add(".NET", $"{RuntimeInformation.FrameworkDescription} ({(GCSettings.IsServerGC ? "server" : "workstation")} GC, tiered JIT with PGO default, Release={IsRelease()})");
        Add("Clock", ClockDescription());
        foreach (var provider in providers.Where(p => !RunSpec.IsNativeName(p)))
        {
            Add($"SQLite ({provider})", SafeVersion(provider));
        }

        if (native is not null)
        {
            Add("SQLite (Native)", native.Version);
            Add("Native library", native.Library);
            Add("C compiler", $"{native.Compiler}, -O2 -std=c11");
        }
        else
        {
            Add("Native library", SafeLibrary());
        }

        return new MachineInfo(list);
    }

    public static bool IsRelease()
    {
#if DEBUG
        return false;
#else
        return true;
#endif
    }

    /// <summary>The cost of one <see cref="Stopwatch.GetTimestamp"/>, measured, in nanoseconds.</summary>
    public static double TimestampCostNs()
    {
        const int n = 2_000_000;
        long sink = 0;
        var start = Stopwatch.GetTimestamp();
        for (var i = 0; i < n; i++)
        {
            sink += Stopwatch.GetTimestamp();
        }

        var ticks = Stopwatch.GetTimestamp() - start;
        GC.KeepAlive(sink);
        return ticks * (1e9 / Stopwatch.Frequency) / n;
    }

    private static string ClockDescription() => string.Create(
        CultureInfo.InvariantCulture,
        $"Stopwatch {Stopwatch.Frequency:N0} Hz (resolution {1e9 / Stopwatch.Frequency:0.##} ns, high-resolution={Stopwatch.IsHighResolution}), one read costs {TimestampCostNs():0.0} ns; C baseline: clock_gettime(CLOCK_MONOTONIC)");

    private static string SafeVersion(string provider)
    {
        try
        {
            return ProviderCatalog.SqliteDriver(provider).NativeLibraryVersion;
        }
        catch (Exception e) when (e is BlockDbException or DllNotFoundException or EntryPointNotFoundException)
        {
            return "unavailable: " + e.Message;
        }
    }

    private static string SafeLibrary()
    {
        try
        {
            return NativeLibraryLocator.Find();
        }
        catch (Exception e) when (e is IOException or InvalidOperationException)
        {
            return "unknown: " + e.Message;
        }
    }

    private static string CpuModel()
    {
        const string file = "/proc/cpuinfo";
        var line = File.Exists(file) ? File.ReadLines(file).FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal)) : null;
        return line?.Split(':', 2)[1].Trim() ?? RuntimeInformation.ProcessArchitecture.ToString();
    }

    private static string MemTotal()
    {
        const string file = "/proc/meminfo";
        var line = File.Exists(file) ? File.ReadLines(file).FirstOrDefault(l => l.StartsWith("MemTotal:", StringComparison.Ordinal)) : null;
        var kb = line?.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1];
        return kb is null ? "unknown" : string.Create(CultureInfo.InvariantCulture, $"{long.Parse(kb, CultureInfo.InvariantCulture) / 1048576.0:0.0} GiB");
    }

    private static string OsRelease()
    {
        const string file = "/etc/os-release";
        var line = File.Exists(file) ? File.ReadLines(file).FirstOrDefault(l => l.StartsWith("PRETTY_NAME=", StringComparison.Ordinal)) : null;
        return line?.Split('=', 2)[1].Trim('"') ?? RuntimeInformation.OSDescription;
    }
}
