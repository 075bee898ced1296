using System.CommandLine;
using System.Globalization;
using BlockDb.Bench.Model;
using BlockDb.Opening;

namespace BlockDb.Bench.Cli;

/// <summary>The command line: a preset, then filters and settings that override it.</summary>
internal static class BenchCommand
{
    private static readonly Option<string> Preset = new("--preset", "-p") { Description = "smoke | quick | full (default quick).", DefaultValueFactory = _ => "quick" };
    private static readonly Option<bool> Smoke = new("--smoke") { Description = "Same as --preset smoke: every provider and code path on a tiny DB in seconds; exits 1 on any failure or inconsistency (CI)." };
    private static readonly Option<bool> Quick = new("--quick") { Description = "Same as --preset quick: every study on 1e4 and 1e5 rows, under 3 minutes on 2 cores." };
    private static readonly Option<bool> Full = new("--full") { Description = "Same as --preset full: sizes 1e4..1e7, all pragma sets, batch sizes, threads 1/2/4 (about 25 minutes on 2 cores)." };
    private static readonly Option<string[]> Providers = ListParser.ListOption("--providers", "MicrosoftData, SystemData, PInvoke, Native (C, BlockDb's design), NativePlain (C plain limit; limit study only) (comma-separated or repeated; default all).");
    private static readonly Option<string[]> Workloads = ListParser.ListOption("--workloads", "select, insert, xor-select-insert, xor-ignore-select, xor-returning (or xor = all three), join, new-blockset, replay (needs --replay), xor-hit (default: all but replay without --replay and xor-hit).");
    private static readonly Option<string[]> Studies = ListParser.ListOption("--studies", "size, pragma, batch, threads, api, scale, limit (default: the preset's).");
    private static readonly Option<string[]> Sizes = ListParser.ListOption("--sizes", "Pre-filled blocks for the size study, e.g. 1e4,1e5,1e6,1e7 (also 10k, 1m).");
    private static readonly Option<string?> RefSize = new("--ref-size") { Description = "The size every other study runs at (default: the largest size up to 1e6)." };
    private static readonly Option<string[]> ExtendedWorkloads = ListParser.ListOption("--extended-workloads", "Workloads that also run at sizes above --ref-size (default: all selected).");
    private static readonly Option<string[]> Pragmas = ListParser.ListOption("--pragmas", "Pragma sets: defaults, journal-wal, sync-normal, sync-off, temp-memory, cache-64m, mmap-64m, threads-8, recommended, all.");
    private static readonly Option<string?> RefPragma = new("--ref-pragma") { Description = "The pragma set of the other studies (default recommended)." };
    private static readonly Option<string[]> BatchSizes = ListParser.ListOption("--batch-sizes", "Commit every N writes for the batch study, e.g. 1,16,256,4096,65536,all (all = one transaction).");
    private static readonly Option<string?> RefBatch = new("--ref-batch") { Description = "The batch size of the other studies (default all = one transaction per run, as the seed's table)." };
    private static readonly Option<int?> ThreadBatch = new("--thread-batch") { Description = "Commit every N writes in the threads study (default 1000, BlockDb's default)." };
    private static readonly Option<string[]> Layouts = ListParser.ListOption("--layouts", "Block layouts of the scale and limit studies: TextHash, BlobHash, KeyMap (default all).");
    private static readonly Option<string[]> ScaleSizes = ListParser.ListOption("--scale-sizes", "Pre-filled blocks for the scale study, e.g. 1e5,1e6,1e7 (default: --sizes).");
    private static readonly Option<int?> ScaleBatch = new("--scale-batch") { Description = "Commit every N writes in the scale study (default 1000, BlockDb's default; 0 = one transaction)." };
    private static readonly Option<int?> LimitBatch = new("--limit-batch") { Description = "Commit every N writes in the limit study (default 1000, BlockDb's default; 0 = one transaction)." };
    private static readonly Option<string[]> ReadsPerTransaction = ListParser.ListOption("--reads-per-transaction", "BlockDb:Batching:ReadsPerTransaction variants of the limit study, e.g. default,1 (default = BlockDb's: 256 in WAL mode; 1 = read batching off).");
    private static readonly Option<string[]> Threads = ListParser.ListOption("--threads", "Thread counts for the threads study, e.g. 1,2,4.");
    private static readonly Option<string[]> Connections = ListParser.ListOption("--connections", "per-thread, shared (default both).");
    private static readonly Option<string[]> Api = ListParser.ListOption("--api", "async, sync, driver (default all).");
    private static readonly Option<int?> Ops = new("--ops") { Description = "Timed ops per run (replay: at most this many blocks, whole files)." };
    private static readonly Option<int?> Warmup = new("--warmup") { Description = "Untimed warm-up ops per run, on the same fresh copy (default ops/2)." };
    private static readonly Option<int?> Repetitions = new("--repetitions", "-r") { Description = "Repetitions per configuration (median, min/max and CV are reported)." };
    private static readonly Option<int?> LatencyGroup = new("--latency-group") { Description = "Ops per latency sample: 1 = a Stopwatch read per op (default); 64 = per group of 64." };
    private static readonly Option<int?> Seed = new("--seed") { Description = "Data seed (default 42)." };
    private static readonly Option<double?> DuplicateShare = new("--dup-share") { Description = "Share of repeated blocks in write streams, 0..1 (default 0.2)." };
    private static readonly Option<int?> BlocksetBlocks = new("--blockset-blocks", "-k") { Description = "Blocks per new blockset (default 16)." };
    private static readonly Option<FileInfo?> Replay = new("--replay") { Description = "A block stream recorded by samples/BlockDb.Backup (TSV: file_index, block_index, hash, size); adds the replay workload." };
    private static readonly Option<DirectoryInfo?> Work = new("--work") { Description = "Scratch folder for templates, fresh copies and the native binary (default $TMPDIR/blockdb-bench)." };
    private static readonly Option<DirectoryInfo?> Out = new("--out", "-o") { Description = "Output folder (default bench/results/<timestamp>-<preset>)." };
    private static readonly Option<bool> NoPlots = new("--no-plots") { Description = "Skip the PNG plots." };
    private static readonly Option<bool> Plain = new("--plain") { Description = "Plain progress lines even on a terminal." };
    private static readonly Option<int?> JitWarmup = new("--jit-warmup-runs") { Description = "JIT warm-up runs per provider and workload before measuring." };
    private static readonly Option<int?> NativePrefault = new("--native-prefault-mb") { Description = "MiB of heap the C baseline touches and frees before opening SQLite, so its allocator starts warm like the long-lived .NET process (default 256; 0 = off)." };
    private static readonly Option<bool> DryRun = new("--dry-run") { Description = "Print the plan (runs per study) and exit." };

    public static RootCommand Create(Func<SweepSettings, bool, int> run)
    {
        var root = new RootCommand("BlockDb provider sweep: workloads x providers (and a native C baseline) x DB size x pragmas x batch size x threads x call path.");
        foreach (var option in new Option[]
        {
            Preset, Smoke, Quick, Full, Providers, Workloads, Studies, Sizes, RefSize, ExtendedWorkloads, Pragmas, RefPragma, BatchSizes, RefBatch, ThreadBatch, Layouts, ScaleSizes, ScaleBatch, LimitBatch, ReadsPerTransaction,
            Threads, Connections, Api, Ops, Warmup, Repetitions, LatencyGroup, Seed, DuplicateShare, BlocksetBlocks, Replay, Work, Out, NoPlots, Plain, JitWarmup, NativePrefault, DryRun,
        })
        {
            root.Add(option);
        }

        root.SetAction(result =>
        {
            SweepSettings settings;
            try
            {
                settings = Settings(result);
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine(e.Message);
                return 2;
            }

            return run(settings, result.GetValue(DryRun));
        });
        root.Add(ConcurrencyCommand.Create());
        root.Add(Server.ServerCommand.Create());
        root.Add(Server.ServerCommand.CreateWorker());
        root.Add(Lifecycle.LifecycleCommand.Create());
        root.Add(Blocksets.BlocksetGrowthCommand.Create());
        root.Add(DuplicatiReplay.DuplicatiReplayCommand.Create());
        root.Add(BlockDb.Bench.Seed.SeedCommand.Create());
        root.Add(Limit.LimitCommand.Create());
        root.Add(Recreate.RecreateCommand.Create());
        return root;
    }


    private static SweepSettings Settings(ParseResult r)
    {
        var preset = r.GetValue(Smoke) ? "smoke" : r.GetValue(Full) ? "full" : r.GetValue(Quick) ? "quick" : r.GetValue(Preset)!.Trim().ToLowerInvariant();
        var s = Presets.Get(preset);
        IEnumerable<string>? Values(Option<string[]> o) => r.GetResult(o) is null ? null : ListParser.Items(r.GetValue(o) ?? []);

        s.Providers = Values(Providers)?.Select(ListParser.Provider).Distinct().ToList() ?? [.. ProviderCatalog.SqliteNames, .. RunSpec.NativeProviders];
        s.ProvidersExplicit = r.GetResult(Providers) is not null;
        s.ReplayPath = r.GetValue(Replay)?.FullName;
        var workloads = Values(Workloads)?.SelectMany(WorkloadInfo.Parse).Distinct().ToList();
        if (workloads is not null && workloads.Contains(Workload.Replay) && s.ReplayPath is null)
        {
            throw new ArgumentException("The replay workload needs --replay <tsv>.");
        }

        if (workloads is not null && workloads.Contains(Workload.Import))
        {
            throw new ArgumentException("The import workload runs in `limit` (a rebuild into an empty file beside the C loop), not in the sweep.");
        }

        s.Workloads = workloads ?? WorkloadInfo.Defaults(s.ReplayPath is not null);
        s.WorkloadsExplicit = workloads is not null;
        s.LimitWorkloads = workloads ?? s.LimitWorkloads;
        s.Studies = Values(Studies)?.Select(t => ListParser.Enum<Study>(t, "study")).Distinct().ToList() ?? s.Studies;
        s.Sizes = Values(Sizes)?.Select(ListParser.Size).Distinct().Order().ToList() ?? s.Sizes;
        s.RefSize = r.GetValue(RefSize) is { } rs ? ListParser.Size(rs)
            : r.GetResult(Sizes) is not null ? s.Sizes.Where(z => z <= 1_000_000).DefaultIfEmpty(s.Sizes.Min()).Max()
            : s.RefSize;
        s.ExtendedWorkloads = Values(ExtendedWorkloads)?.SelectMany(WorkloadInfo.Parse).Distinct().ToList()
            ?? (s.ExtendedWorkloads.Count > 0 && r.GetResult(Workloads) is null ? s.ExtendedWorkloads : s.Workloads);
        var pragmas = Values(Pragmas)?.ToList();
        s.Pragmas = pragmas is null ? s.Pragmas
            : pragmas.Contains("all", StringComparer.OrdinalIgnoreCase) ? [.. PragmaSet.All.Select(p => p.Name)]
            : [.. pragmas.Select(p => PragmaSet.Get(p).Name).Distinct()];
        s.RefPragma = r.GetValue(RefPragma) is { } rp ? PragmaSet.Get(rp).Name : s.RefPragma;
        s.BatchSizes = Values(BatchSizes)?.Select(ListParser.Batch).Distinct().ToList() ?? s.BatchSizes;
        s.RefBatch = r.GetValue(RefBatch) is { } rb ? ListParser.Batch(rb) : s.RefBatch;
        s.ThreadBatch = r.GetValue(ThreadBatch) ?? s.ThreadBatch;
        s.Layouts = Values(Layouts)?.Select(l => ListParser.Enum<BlockLayout>(l, "layout")).Distinct().ToList() ?? s.Layouts;
        s.ScaleSizes = Values(ScaleSizes)?.Select(ListParser.Size).Distinct().Order().ToList() ?? (r.GetResult(Sizes) is not null ? [] : s.ScaleSizes);
        s.ScaleBatch = r.GetValue(ScaleBatch) is { } scaleBatch ? ListParser.Batch(scaleBatch.ToString(CultureInfo.InvariantCulture)) : s.ScaleBatch;
        s.LimitBatch = r.GetValue(LimitBatch) is { } limitBatch ? ListParser.Batch(limitBatch.ToString(CultureInfo.InvariantCulture)) : s.LimitBatch;
        s.ReadsVariants = Values(ReadsPerTransaction)?.Select(ListParser.Reads).Distinct().ToList() ?? s.ReadsVariants;
        s.ReadsExplicit = r.GetResult(ReadsPerTransaction) is not null;
        s.Threads = Values(Threads)?.Select(t => ListParser.Positive(t, "thread count")).Distinct().Order().ToList() ?? s.Threads;
        s.Connections = Values(Connections)?.Select(c => ListParser.Enum<ConnectionMode>(c, "connection mode")).Distinct().ToList() ?? [ConnectionMode.PerThread, ConnectionMode.Shared];
        s.ApiPaths = Values(Api)?.Select(a => ListParser.Enum<ApiPath>(a, "api path")).Distinct().ToList() ?? [ApiPath.Async, ApiPath.Sync, ApiPath.Driver];
        s.Ops = r.GetValue(Ops) ?? s.Ops;
        s.Warmup = r.GetValue(Warmup) ?? (r.GetResult(Ops) is not null ? Math.Max(1, s.Ops / 2) : s.Warmup);
        s.Repetitions = r.GetValue(Repetitions) ?? s.Repetitions;
        s.LatencyGroup = r.GetValue(LatencyGroup) ?? s.LatencyGroup;
        s.Seed = r.GetValue(Seed) ?? s.Seed;
        s.DuplicateShare = r.GetValue(DuplicateShare) ?? s.DuplicateShare;
        s.BlocksetBlocks = r.GetValue(BlocksetBlocks) ?? s.BlocksetBlocks;
        s.JitWarmupRuns = r.GetValue(JitWarmup) ?? s.JitWarmupRuns;
        s.NativePrefaultMb = r.GetValue(NativePrefault) ?? s.NativePrefaultMb;
        s.WorkDir = r.GetValue(Work)?.FullName ?? Path.Combine(Path.GetTempPath(), "blockdb-bench");
        s.OutDir = r.GetValue(Out)?.FullName ?? DefaultOut(preset);
        s.Plots = !r.GetValue(NoPlots);
        s.Plain = r.GetValue(Plain);
        Validate(s);
        return s;
    }

    private static void Validate(SweepSettings s)
    {
        if (s.Ops < 1 || s.Warmup < 0 || s.Repetitions < 1 || s.LatencyGroup < 1 || s.BlocksetBlocks < 1 || s.DuplicateShare is < 0 or > 1)
        {
            throw new ArgumentException("--ops, --repetitions, --latency-group and --blockset-blocks must be at least 1, --warmup at least 0, --dup-share between 0 and 1.");
        }

        if (s.Providers.Count == 0 || s.Workloads.Count == 0 || s.Studies.Count == 0 || s.ReadsVariants.Count == 0 || s.Layouts.Count == 0)
        {
            throw new ArgumentException("Nothing to run: --providers, --workloads, --studies, --layouts and --reads-per-transaction must not be empty.");
        }

        if (s.Studies.Contains(Study.Size) && s.Sizes.Count == 0)
        {
            throw new ArgumentException("The size study needs --sizes.");
        }
    }

    /// <summary>bench/results/&lt;timestamp&gt;-&lt;name&gt; when run from the repository, else ./blockdb-bench-results/….</summary>
    /// <param name="name">The preset or subcommand.</param>
    /// <returns>The folder.</returns>
    public static string DefaultOut(string name)
    {
        var stamp = DateTime.UtcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture) + "-" + name;
        foreach (var start in new[] { Environment.CurrentDirectory, AppContext.BaseDirectory })
        {
            for (var dir = new DirectoryInfo(start); dir is not null; dir = dir.Parent)
            {
                if (File.Exists(Path.Combine(dir.FullName, "bench", "BlockDb.Bench", "BlockDb.Bench.csproj")))
                {
                    return Path.Combine(dir.FullName, "bench", "results", stamp);
                }
            }
        }

        return Path.Combine(Environment.CurrentDirectory, "blockdb-bench-results", stamp);
    }
}
