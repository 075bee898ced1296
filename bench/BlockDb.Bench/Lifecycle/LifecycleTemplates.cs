using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Execution;
using BlockDb.Opening;

namespace BlockDb.Bench.Lifecycle;

/// <summary>
/// Builds each lifecycle template once per (plan, layout) and keeps it in the work folder, as the sweep's
/// <see cref="TemplateCache"/> does: through BlockDb's public API on the PInvoke provider (volumes registered, each new
/// block inserted into its volume, each file's blockset added from its block IDs), in transactions of
/// <see cref="FilesPerTransaction"/> files with fast, non-durable settings (synchronous=OFF, 1 GiB cache). Every ID is
/// checked against the plan, the counts and <see cref="IBlockDatabase.CheckAsync"/> after the build, and the file is
/// left in DELETE journal mode so copies start from a neutral state.
/// </summary>
internal sealed class LifecycleTemplates(string folder, Action<string> log)
{
    /// <summary>Files written per transaction while building.</summary>
    public const int FilesPerTransaction = 100_000;

    /// <summary>The template's path (whether it exists or not).</summary>
    public string PathOf(LifecyclePlan plan, int files, int maxBlocks, BlockLayout layout) =>
        Path.Combine(folder, string.Create(CultureInfo.InvariantCulture, $"lifecycle-v{LifecyclePlan.Version}-f{files}-b{maxBlocks}-s{plan.Seed}-{layout}.db"));

    /// <summary>The template's path, built first when it is not in the work folder.</summary>
    public async Task<string> GetOrBuildAsync(LifecyclePlan plan, int files, int maxBlocks, BlockLayout layout)
    {
        Directory.CreateDirectory(folder);
        var path = PathOf(plan, files, maxBlocks, layout);
        if (File.Exists(path))
        {
            return path;
        }

        var building = path + ".building";
        FreshCopy.Delete(building);
        var clock = Stopwatch.StartNew();
        log(string.Create(CultureInfo.InvariantCulture, $"Building the {layout} template ({plan.Blocks:N0} blocks, {plan.Blocksets:N0} blocksets, {plan.Entries.Length:N0} entries, {plan.Volumes:N0} volumes) at {path} ..."));
        await BuildAsync(plan, layout, building);
        File.Move(building, path);
        log(string.Create(CultureInfo.InvariantCulture, $"Built the {layout} template in {clock.Elapsed.TotalSeconds:F1} s ({new FileInfo(path).Length / 1e6:F1} MB)."));
        return path;
    }

    private static async Task BuildAsync(LifecyclePlan plan, BlockLayout layout, string path)
    {
        var options = new BlockDbOptions
        {
            Provider = ProviderCatalog.PInvoke,
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
        await using var db = BlockDatabase.Open(options);
        await using (var session = await db.OpenSessionAsync())
        {
            for (var v = 1; v <= plan.Volumes; v++)
            {
                var id = await session.RegisterVolumeAsync(LifecyclePlan.VolumeName(v), VolumeState.Uploaded);
                Expect(id, v, "volume");
            }

            var keys = new List<BlockKey>(8);
            var next = 0;
            for (var f = 0; f < plan.Blocksets; f++)
            {
                keys.Clear();
                for (var e = plan.FileStarts[f]; e < plan.FileStarts[f + 1]; e++)
                {
                    var block = plan.Entries[e];
                    if (block == next)
                    {
                        var id = (await session.SelectXorInsertAsync(BlockKey.Parse(plan.Hash(block), plan.Sizes[block]), LifecyclePlan.VolumeOf(block))).Id;
                        Expect(id, block + 1, "block");
                        next++;
                    }

                    keys.Add(BlockKey.Parse(plan.Hash(block), plan.Sizes[block]));
                }

                Expect(await session.AddBlocksetAsync(keys.ToArray(), new SelectXorInsertResult[keys.Count], BlockHash.Parse(plan.FullHash(f))), f + 1, "blockset");
                if ((f + 1) % FilesPerTransaction == 0)
                {
                    await session.CommitAsync();
                }
            }

            await session.CommitAsync();
            var counts = await session.GetCountsAsync();
            if (counts != new BlockDbCounts(plan.Blocks, plan.Blocksets, plan.Entries.Length))
            {
                throw new InvalidOperationException($"Template counts {counts} do not match the plan ({plan.Blocks}, {plan.Blocksets}, {plan.Entries.Length}).");
            }

            if (((ISqliteBlockDatabase)db).AppliedPragmas.JournalMode != JournalMode.Delete)
            {
                throw new InvalidOperationException($"Template journal mode is {((ISqliteBlockDatabase)db).AppliedPragmas.JournalMode}, expected DELETE.");
            }
        }

        var check = await db.CheckAsync();
        if (!check.IsClean)
        {
            throw new InvalidOperationException($"The new {layout} template's check is not clean: {check}");
        }
    }

    private static void Expect(long id, long expected, string what)
    {
        if (id != expected)
        {
            throw new InvalidOperationException($"Template {what} got ID {id}, expected {expected}.");
        }
    }
}
