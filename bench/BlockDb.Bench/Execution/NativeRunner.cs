using System.Globalization;
using BlockDb.Bench.Model;
using BlockDb.Sqlite;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Runs one repetition on a C baseline: <c>Native</c> runs BlockDb's own design for the spec's layout (its
/// statements, write and read batches, and for KeyMap its verified in-memory map), <c>NativePlain</c> the plain
/// limit (the same statements in one transaction). The program reads the SQL and data files, applies the same
/// PRAGMAs, warms up, times the same ops to the final commit, and prints key=value results; latencies come back in
/// a binary file of doubles (ns per op).
/// </summary>
internal sealed class NativeRunner(NativeBuild build, int latencyGroup, int prefaultMb)
{
    public RepetitionResult Run(RunSpec spec, int repetition, string dataFile, string dbPath)
    {
        var result = new RepetitionResult { Spec = spec, Repetition = repetition };
        var pragmas = BlockDb.Sqlite.Pragmas.Resolve(ManagedRunner.Options(spec, dbPath).Pragmas);
        var latencyFile = dbPath + ".latency";
        string[] args =
        [
            "--lib", build.Library,
            "--db", dbPath,
            "--sql", build.SqlFile(pragmas),
            "--data", dataFile,
            "--workload", WorkloadInfo.Name(spec.Workload),
            "--layout", LayoutName(spec.Layout),
            "--mode", spec.IsPlain ? "plain" : "same",
            "--reads", (spec.Reads ?? 0).ToString(CultureInfo.InvariantCulture),
            "--default-reads", SqliteServices.DefaultReadsPerTransaction.ToString(CultureInfo.InvariantCulture),
            "--read-ms", new BatchingOptions().ReadTransactionMilliseconds.ToString(CultureInfo.InvariantCulture),
            "--batch", spec.Batch.ToString(CultureInfo.InvariantCulture),
            "--threads", spec.Threads.ToString(CultureInfo.InvariantCulture),
            "--shared", spec.Connections == ConnectionMode.Shared ? "1" : "0",
            "--group", latencyGroup.ToString(CultureInfo.InvariantCulture),
            "--latency", latencyFile,
            "--prefault-mb", prefaultMb.ToString(CultureInfo.InvariantCulture),
            "--check-every", WorkloadInfo.ImportCheckStride(spec.Ops).ToString(CultureInfo.InvariantCulture),
        ];
        try
        {
            var (code, stdout, stderr) = ProcessRunner.Run(build.Binary, args);
            var values = stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
                .Select(l => l.Split('=', 2))
                .Where(p => p.Length == 2)
                .GroupBy(p => p[0])
                .ToDictionary(g => g.Key, g => g.Last()[1]);
            if (code != 0 || !values.TryGetValue("status", out var status) || status != "ok")
            {
                throw new InvalidOperationException($"native exit {code}: {values.GetValueOrDefault("error") ?? (stdout + stderr).Trim()}");
            }

            long L(string key) => long.Parse(values[key], CultureInfo.InvariantCulture);
            result.SqliteVersion = values["libversion"];
            result.ElapsedNs = L("elapsed_ns");
            result.CpuNs = L("cpu_ns");
            result.Ops = L("ops");
            result.Units = L("units");
            result.Created = L("created");
            result.Digest = ulong.Parse(values["digest"], CultureInfo.InvariantCulture);
            var counts = values["counts"].Split(',').Select(c => long.Parse(c, CultureInfo.InvariantCulture)).ToArray();
            result.Counts = new BlockDbCounts(counts[0], counts[1], counts[2]);
            result.AppliedPragmas = PragmaSql.Parse(name => values.GetValueOrDefault("pragma." + name)).ToString();
            result.KeyMapBytes = values.TryGetValue("keymap_bytes", out var mapBytes) ? long.Parse(mapBytes, CultureInfo.InvariantCulture) : 0;
            var bytes = File.ReadAllBytes(latencyFile);
            var samples = new double[bytes.Length / sizeof(double)];
            Buffer.BlockCopy(bytes, 0, samples, 0, samples.Length * sizeof(double));
            result.LatenciesNs = samples;
        }
        finally
        {
            File.Delete(latencyFile);
        }

        return result;
    }

    /// <summary>The C program's name of a layout.</summary>
    public static string LayoutName(BlockLayout layout) => layout switch
    {
        BlockLayout.TextHash => "text",
        BlockLayout.BlobHash => "blob",
        BlockLayout.KeyMap => "keymap",
        _ => throw new ArgumentOutOfRangeException(nameof(layout), layout, "The C baseline has no design for this layout."),
    };
}
