using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Data;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Builds each pre-filled database once per (size, seed) and keeps it in the work folder. Built through
/// BlockDb's own engine (PInvoke provider, bulk import in transactions of 1e6 items) with fast, non-durable settings
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
        // Through the bulk import (issue 13 item 5), the path issue 13 item 7 asks 1e8-block templates to take:
        // 1,024 blocks to a call (batch select-xor-insert) instead of one call each. Same rows and IDs as the calls:
        // blocks 1..N, then blocksets 1..F.
        using var db = BlockDatabase.Open(options);
        var import = new ImportOptions { ItemsPerTransaction = 1_000_000 };
        var blocks = db.ImportBlocksAsync(Blocks(plan), import).AsTask().GetAwaiter().GetResult();
        var blocksets = db.ImportBlocksetsAsync(Blocksets(plan), import).AsTask().GetAwaiter().GetResult();
        if (blocks.Created != plan.Blocks || blocksets.Created != plan.Blocksets)
        {
            throw new InvalidOperationException($"The template import created {blocks.Created} blocks and {blocksets.Created} blocksets; the plan has {plan.Blocks} and {plan.Blocksets}.");
        }

        using var session = db.OpenSessionAsync().GetAwaiter().GetResult();
        foreach (var i in plan.Blocks == 0 ? [] : (int[])[0, plan.Blocks / 2, plan.Blocks - 1])
        {
            if (session.FindBlockAsync(BlockKey.Parse(plan.Hash(i), plan.Sizes[i])).GetAwaiter().GetResult() is var id && id != i + 1)
            {
                throw new InvalidOperationException($"Template block {i} got ID {id}, expected {i + 1}.");
            }
        }

        foreach (var f in plan.Blocksets == 0 ? [] : (int[])[0, plan.Blocksets - 1])
        {
            var length = 0L;
            for (var b = plan.FileStarts[f]; b < plan.FileStarts[f + 1]; b++)
            {
                length += plan.Sizes[b];
            }

            if (session.FindBlocksetAsync(BlockHash.Parse(plan.FullHash(f)), length).GetAwaiter().GetResult() is var id && id != f + 1)
            {
                throw new InvalidOperationException($"Template blockset {f} got ID {id}, expected {f + 1}.");
            }
        }

        var counts = session.GetCountsAsync().GetAwaiter().GetResult();
        if (counts != new BlockDbCounts(plan.Blocks, plan.Blocksets, plan.Blocks))
        {
            throw new InvalidOperationException($"Template counts {counts} do not match the plan.");
        }

        if (((ISqliteBlockDatabase)db).AppliedPragmas.JournalMode != JournalMode.Delete)
        {
            throw new InvalidOperationException($"Template journal mode is {((ISqliteBlockDatabase)db).AppliedPragmas.JournalMode}, expected DELETE.");
        }
    }

    private static async IAsyncEnumerable<ImportBlock> Blocks(PrefillPlan plan)
    {
        for (var i = 0; i < plan.Blocks; i++)
        {
            var block = plan.BinaryBlock(i);
            yield return new ImportBlock(new BlockKey(block.Hash, block.Size));
        }

        await Task.CompletedTask.ConfigureAwait(false);
    }

    private static async IAsyncEnumerable<ImportBlockset> Blocksets(PrefillPlan plan)
    {
        for (var f = 0; f < plan.Blocksets; f++)
        {
            var blocks = new BlockKey[plan.FileStarts[f + 1] - plan.FileStarts[f]];
            for (var b = 0; b < blocks.Length; b++)
            {
                blocks[b] = plan.BinaryBlock(plan.FileStarts[f] + b);
            }

            yield return new ImportBlockset(blocks, plan.BinaryFullHash(f));
        }

        await Task.CompletedTask.ConfigureAwait(false);
    }
}
