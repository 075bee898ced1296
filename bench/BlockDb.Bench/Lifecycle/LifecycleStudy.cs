using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Execution;

namespace BlockDb.Bench.Lifecycle;

/// <summary>
/// Issue 12's benchmark targets. <b>Delete and collect</b>: on a fresh copy of a layout's template (1e6 blocksets), delete
/// <see cref="LifecycleSettings.DeleteShare"/> of the blocksets, evenly spread, one <c>DeleteBlocksetAsync</c> each and a
/// final commit (timed: per deleted blockset), then <c>DeleteUnreferencedBlocksAsync()</c> and its commit (timed: per
/// collected block); then, untimed, check what went against the plan's oracle. <b>Convert</b>: a fresh copy of a
/// 1e6-block TextHash file through <see cref="BlockDbConverter.ConvertAsync"/> to each target layout (timed: blocks per
/// second, its own check included, and the copy alone). Every configuration runs once per repetition; the order is
/// rotated by one each repetition so drift on a shared machine hits all alike.
/// </summary>
internal sealed class LifecycleStudy(LifecycleSettings settings, Action<string> log)
{
    private readonly string _runs = Path.Combine(settings.WorkFolder, "lifecycle-runs");

    /// <summary>The delete-and-collect template's plan (null when that part is off).</summary>
    public LifecyclePlan? DeletePlan { get; private set; }

    /// <summary>The conversion source's plan (null when that part is off).</summary>
    public LifecyclePlan? ConvertPlan { get; private set; }

    /// <summary>Every delete-and-collect run, in the order run.</summary>
    public List<DeleteRun> Deletes { get; } = [];

    /// <summary>Every conversion run, in the order run.</summary>
    public List<ConvertRun> Converts { get; } = [];

    /// <summary>The load average (1 minute) at the start of each run and at the end.</summary>
    public List<double> Loads { get; } = [];

    /// <summary>The configurations of one repetition in the order they run: delete-and-collect (layouts interleaved per provider), then conversions.</summary>
    public IReadOnlyList<(BlockLayout Layout, string Provider, bool Convert)> Order(int repetition)
    {
        var deletes = settings.Blocksets > 0
            ? settings.Providers.SelectMany(p => settings.Layouts.Select(l => (l, p, false))).ToList()
            : [];
        var converts = settings.ConvertBlocks > 0
            ? settings.Providers.SelectMany(p => settings.ConvertTargets.Select(l => (l, p, true))).ToList()
            : [];
        return [.. Rotate(deletes, repetition), .. Rotate(converts, repetition)];
    }

    /// <summary>The plans, and the templates' paths and whether they exist, for a dry run.</summary>
    public IEnumerable<(string Path, bool Exists, string What)> Templates()
    {
        var cache = new LifecycleTemplates(settings.WorkFolder, log);
        MakePlans();
        if (DeletePlan is { } d)
        {
            foreach (var layout in settings.Layouts)
            {
                var path = cache.PathOf(d, settings.Blocksets, 0, layout);
                yield return (path, File.Exists(path), string.Create(CultureInfo.InvariantCulture, $"{layout}: {d.Blocks:N0} blocks, {d.Blocksets:N0} blocksets, {d.Entries.Length:N0} entries, {d.Volumes:N0} volumes; the run deletes {d.DeletedFiles.Length:N0} blocksets and collects {d.CollectedBlocks.Length:N0} blocks"));
            }
        }

        if (ConvertPlan is { } c)
        {
            var path = cache.PathOf(c, 0, settings.ConvertBlocks, BlockLayout.TextHash);
            yield return (path, File.Exists(path), string.Create(CultureInfo.InvariantCulture, $"TextHash conversion source: {c.Blocks:N0} blocks, {c.Blocksets:N0} blocksets, {c.Entries.Length:N0} entries, {c.Volumes:N0} volumes"));
        }
    }

    public async Task RunAsync()
    {
        MakePlans();
        var cache = new LifecycleTemplates(settings.WorkFolder, log);
        var deleteTemplates = new Dictionary<BlockLayout, string>();
        if (DeletePlan is { } d)
        {
            foreach (var layout in settings.Layouts)
            {
                deleteTemplates[layout] = await cache.GetOrBuildAsync(d, settings.Blocksets, 0, layout);
            }
        }

        var convertTemplate = ConvertPlan is { } c ? await cache.GetOrBuildAsync(c, 0, settings.ConvertBlocks, BlockLayout.TextHash) : null;
        Directory.CreateDirectory(_runs);
        var total = Order(0).Count * settings.Repetitions;
        var done = 0;
        for (var rep = 0; rep < settings.Repetitions; rep++)
        {
            var order = Order(rep);
            for (var i = 0; i < order.Count; i++)
            {
                var (layout, provider, convert) = order[i];
                var load = LoadAverage();
                Loads.Add(load);
                done++;
                if (convert)
                {
                    var run = await ConvertAsync(rep + 1, i + 1, layout, provider, convertTemplate!, ConvertPlan!, load);
                    Converts.Add(run);
                    log(string.Create(CultureInfo.InvariantCulture, $"[{done}/{total}] rep {rep + 1} convert TextHash -> {layout,-8} {provider,-13} {run.Blocks:N0} blocks: {run.BlocksPerSecond:N0} blocks/s with check ({run.TotalSeconds:F2} s), copy {run.CopyBlocksPerSecond:N0} blocks/s; check {(run.CheckClean ? "clean" : "NOT CLEAN")}; load {load:F2}{Failed(run.Error)}"));
                }
                else
                {
                    var run = await DeleteAndCollectAsync(rep + 1, i + 1, layout, provider, deleteTemplates[layout], DeletePlan!, load);
                    Deletes.Add(run);
                    log(string.Create(CultureInfo.InvariantCulture, $"[{done}/{total}] rep {rep + 1} delete+collect {layout,-8} {provider,-13} {run.BlocksetsDeleted:N0} blocksets {run.MicrosPerBlockset:F2} µs each ({run.DeleteSeconds:F2} s), {run.BlocksCollected:N0} blocks {run.MicrosPerBlock:F2} µs each ({run.CollectSeconds:F2} s); verified in {run.VerifySeconds:F1} s, check {(run.CheckClean ? "clean" : "NOT CLEAN")}; load {load:F2}{Failed(run.Error)}"));
                }
            }
        }

        Loads.Add(LoadAverage());
    }

    private static string Failed(string? error) => error is null ? string.Empty : " FAILED: " + error;

    private void MakePlans()
    {
        DeletePlan ??= settings.Blocksets > 0 ? LifecyclePlan.Create(settings.Blocksets, 0, settings.Seed, settings.DeleteShare) : null;
        ConvertPlan ??= settings.ConvertBlocks > 0 ? LifecyclePlan.Create(0, settings.ConvertBlocks, settings.Seed, settings.DeleteShare) : null;
    }

    private async Task<DeleteRun> DeleteAndCollectAsync(int rep, int order, BlockLayout layout, string provider, string template, LifecyclePlan plan, double load)
    {
        var path = FreshCopy.Create(template, _runs, "lifecycle-run.db");
        string version = "?";
        double firstLookup = 0, deleteSeconds = 0, collectSeconds = 0, verifySeconds = 0;
        CollectResult? collected = null;
        var clean = false;
        try
        {
            var options = new BlockDbOptions { Provider = provider, DataSource = path, Batching = new BatchingOptions { CommitEvery = settings.CommitEvery } };
            await using var db = BlockDatabase.Open(options);
            version = db.EngineVersion;
            var issues = new List<string>();
            await using (var session = await db.OpenSessionAsync())
            {
                // Untimed: the first lookup (the KeyMap layout loads its key map here, as a backup engine's earlier work would have).
                var start = Stopwatch.GetTimestamp();
                if (await session.FindBlockAsync(BlockKey.Parse(plan.Hash(0), plan.Sizes[0])) != 1)
                {
                    throw new InvalidOperationException("The template's first block is not found at ID 1.");
                }

                firstLookup = Stopwatch.GetElapsedTime(start).TotalSeconds;
                Quiesce();
                start = Stopwatch.GetTimestamp();
                foreach (var f in plan.DeletedFiles)
                {
                    await session.DeleteBlocksetAsync(f + 1);
                }

                await session.CommitAsync();
                deleteSeconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
                Quiesce();
                start = Stopwatch.GetTimestamp();
                collected = await session.DeleteUnreferencedBlocksAsync();
                await session.CommitAsync();
                collectSeconds = Stopwatch.GetElapsedTime(start).TotalSeconds;

                var verify = Stopwatch.StartNew();
                await LifecycleVerifier.AfterCollectAsync(session, plan, collected, settings.SampleBlocksets, issues);
                var check = await db.CheckAsync();
                clean = check.IsClean;
                if (!clean)
                {
                    issues.Add($"check not clean: {check}");
                }

                verifySeconds = verify.Elapsed.TotalSeconds;
            }

            return Run(issues.Count == 0 ? null : string.Join("; ", issues));
        }
        catch (Exception e) when (e is BlockDbException or InvalidOperationException or IOException or ArgumentException)
        {
            return Run(e.GetType().Name + ": " + e.Message);
        }
        finally
        {
            FreshCopy.Delete(path);
        }

        DeleteRun Run(string? error) => new(
            rep, order, layout, provider, version, load, firstLookup, plan.DeletedFiles.Length, deleteSeconds,
            collected?.Blocks ?? 0, collected?.Bytes ?? 0, collectSeconds, verifySeconds, clean, error);
    }

    private async Task<ConvertRun> ConvertAsync(int rep, int order, BlockLayout target, string provider, string template, LifecyclePlan plan, double load)
    {
        var source = FreshCopy.Create(template, _runs, "convert-source.db");
        var targetPath = Path.Combine(_runs, "convert-target.db");
        FreshCopy.Delete(targetPath);
        ConversionResult? result = null;
        double copySeconds = 0, totalSeconds = 0;
        long bytes = 0;
        try
        {
            var progress = new CopyClock();
            var from = new BlockDbOptions { Provider = provider, DataSource = source };
            var to = new BlockDbOptions { Provider = provider, DataSource = targetPath, Index = new IndexOptions { Layout = target } };
            Quiesce();
            var start = Stopwatch.GetTimestamp();
            progress.Start = start;
            result = await BlockDbConverter.ConvertAsync(from, to, progress: progress);
            totalSeconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
            copySeconds = progress.CopySeconds;
            bytes = new FileInfo(targetPath).Length;
            var issues = new List<string>();
            if (result.SourceLayout != BlockLayout.TextHash || result.TargetLayout != target)
            {
                issues.Add($"layouts {result.SourceLayout} -> {result.TargetLayout}, expected TextHash -> {target}");
            }

            if (result.Blocks != plan.Blocks || result.Blocksets != plan.Blocksets || result.BlocksetEntries != plan.Entries.Length || result.Volumes != plan.Volumes || result.MergedDuplicates != 0)
            {
                issues.Add($"copied {result.Volumes} volumes, {result.Blocks} blocks ({result.MergedDuplicates} merged), {result.Blocksets} blocksets, {result.BlocksetEntries} entries; expected {plan.Volumes}, {plan.Blocks} (0), {plan.Blocksets}, {plan.Entries.Length}");
            }

            if (!result.Check.IsClean)
            {
                issues.Add($"the conversion's check is not clean: {result.Check}");
            }

            await LifecycleVerifier.ConvertedAsync(targetPath, provider, target, plan, settings.SampleBlocksets, issues);
            return Run(issues.Count == 0 ? null : string.Join("; ", issues));
        }
        catch (Exception e) when (e is BlockDbException or InvalidOperationException or IOException or ArgumentException)
        {
            return Run(e.GetType().Name + ": " + e.Message);
        }
        finally
        {
            FreshCopy.Delete(source);
            FreshCopy.Delete(targetPath);
        }

        ConvertRun Run(string? error) => new(
            rep, order, target, provider, load, result?.Blocks ?? 0, result?.Blocksets ?? 0, result?.BlocksetEntries ?? 0, result?.Volumes ?? 0,
            copySeconds, totalSeconds, bytes, result?.Check.IsClean ?? false, error);
    }

    private static List<T> Rotate<T>(List<T> items, int by) =>
        items.Count == 0 ? items : [.. items.Skip(by % items.Count), .. items.Take(by % items.Count)];

    /// <summary>A full GC before a timed phase, so no collection of earlier garbage lands in it.</summary>
    private static void Quiesce()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }

    /// <summary>The 1-minute load average, or NaN where /proc/loadavg is missing.</summary>
    public static double LoadAverage()
    {
        try
        {
            var text = File.ReadAllText("/proc/loadavg");
            return double.Parse(text.Split(' ')[0], CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException)
        {
            return double.NaN;
        }
    }

    /// <summary>Notes when the conversion's last table is copied, on the copying thread (synchronously, unlike <see cref="Progress{T}"/>).</summary>
    private sealed class CopyClock : IProgress<ConversionProgress>
    {
        public long Start { get; set; }

        public double CopySeconds { get; private set; }

        public void Report(ConversionProgress value)
        {
            if (value.Table == "BlocksetEntry" && value.Rows == value.TotalRows)
            {
                CopySeconds = Stopwatch.GetElapsedTime(Start).TotalSeconds;
            }
        }
    }
}
