using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Data;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Builds each pre-filled database once per (size, seed) and keeps it in the work folder. Built through
/// BlockDb's own engine (PInvoke provider) in one transaction with fast, non-durable settings
/// (synchronous=OFF, 1 GiB cache), then left in DELETE journal mode so that copies start from a neutral state.
/// </summary>
internal sealed class TemplateCache(string folder, Action<string> log)
{
    /// <summary>Bump when the data generation changes, so stale templates are not reused.</summary>
    private const int GeneratorVersion = 1;

    public string GetOrBuild(PrefillPlan plan, BlockLayout layout = BlockLayout.TextHash)
    {
        Directory.CreateDirectory(folder);
        var path = Path.Combine(folder, string.Create(CultureInfo.InvariantCulture, $"prefill-v{GeneratorVersion}-n{plan.Blocks}-s{plan.Seed}{(layout == BlockLayout.TextHash ? string.Empty : "-" + layout)}.db"));
        if (File.Exists(path))
        {
            return path;
        }

        var building = path + ".building";
        FreshCopy.Delete(building);
        var clock = Stopwatch.StartNew();
        log(string.Create(CultureInfo.InvariantCulture, $"Building the {plan.Blocks:N0}-block {layout} template ({plan.Blocksets:N0} blocksets) at {path} ..."));
        Build(plan, layout, building);
        File.Move(building, path);
        log(string.Create(CultureInfo.InvariantCulture, $"Built the {plan.Blocks:N0}-block template in {clock.Elapsed.TotalSeconds:F1} s ({new FileInfo(path).Length / 1e6:F1} MB)."));
        return path;
    }

    private static void Build(PrefillPlan plan, BlockLayout layout, string path)
    {
        var options = new BlockDbOptions
        {
            Provider = "PInvoke",
            DataSource = path,
            Pragmas = new PragmaOptions
            {
                Preset = PragmaPreset.SqliteDefaults,
                Synchronous = SynchronousMode.Off,
                TempStore = TempStoreMode.Memory,
                CacheSize = -1_048_576,
            },
            Batching = new BatchingOptions { CommitEvery = 0 },
            Index = new IndexOptions { Layout = layout },
        };
        using var db = BlockDatabase.Open(options);
        using var session = db.OpenSessionAsync().GetAwaiter().GetResult();
        for (var i = 0; i < plan.Blocks; i++)
        {
            var id = session.InsertBlockAsync(plan.Hash(i), plan.Sizes[i]).GetAwaiter().GetResult();
            if (id != i + 1)
            {
                throw new InvalidOperationException($"Template block {i} got ID {id}, expected {i + 1}.");
            }
        }

        var ids = new List<long>();
        for (var f = 0; f < plan.Blocksets; f++)
        {
            ids.Clear();
            for (var b = plan.FileStarts[f]; b < plan.FileStarts[f + 1]; b++)
            {
                ids.Add(b + 1);
            }

            var id = session.AddBlocksetAsync(ids, plan.FullHash(f)).GetAwaiter().GetResult();
            if (id != f + 1)
            {
                throw new InvalidOperationException($"Template blockset {f} got ID {id}, expected {f + 1}.");
            }
        }

        session.CommitAsync().GetAwaiter().GetResult();
        var counts = session.GetCountsAsync().GetAwaiter().GetResult();
        if (counts != new BlockDbCounts(plan.Blocks, plan.Blocksets, plan.Blocks))
        {
            throw new InvalidOperationException($"Template counts {counts} do not match the plan.");
        }

        if (session.AppliedPragmas.JournalMode != JournalMode.Delete)
        {
            throw new InvalidOperationException($"Template journal mode is {session.AppliedPragmas.JournalMode}, expected DELETE.");
        }
    }
}
