using System.Globalization;

namespace BlockDb.Bench.Lifecycle;

/// <summary>The untimed checks after each run, against the plan's oracle. Each problem found is added to <c>issues</c>.</summary>
internal static class LifecycleVerifier
{
    /// <summary>
    /// After delete-and-collect: what the collection returned (blocks, bytes, per volume), the row counts, a sample of
    /// remaining blocksets listed block by block with their lengths and full hashes, their blocks found by hash (the
    /// KeyMap layout's map after the deletes), deleted blocksets and collected blocks gone, and a sample of volumes'
    /// block counts.
    /// </summary>
    public static async Task AfterCollectAsync(IBlockSession session, LifecyclePlan plan, CollectResult collected, int sample, List<string> issues)
    {
        if (collected.Blocks != plan.CollectedBlocks.Length || collected.Bytes != plan.CollectedBytes)
        {
            issues.Add(Text($"collected {collected.Blocks} blocks ({collected.Bytes} bytes), expected {plan.CollectedBlocks.Length} ({plan.CollectedBytes})"));
        }

        var byVolume = collected.ByVolume.ToDictionary(v => v.VolumeId ?? 0, v => (v.Blocks, v.Bytes));
        if (byVolume.Count != plan.CollectedByVolume.Count || plan.CollectedByVolume.Any(p => !byVolume.TryGetValue(p.Key, out var got) || got != p.Value))
        {
            issues.Add(Text($"collected from {byVolume.Count} volumes, expected {plan.CollectedByVolume.Count}, or the blocks per volume differ"));
        }

        var expected = new BlockDbCounts(plan.Blocks - plan.CollectedBlocks.Length, plan.Blocksets - plan.DeletedFiles.Length, plan.Entries.Length - plan.DeletedEntries);
        var counts = await session.GetCountsAsync();
        if (counts != expected)
        {
            issues.Add($"counts {counts}, expected {expected}");
        }

        await RemainingBlocksetsAsync(session, plan, sample, issues, afterDelete: true);
        var deleted = plan.DeletedFiles;
        for (var i = 0; i < Math.Min(sample / 10, deleted.Length); i++)
        {
            var f = deleted[(int)((long)i * deleted.Length / Math.Min(sample / 10, deleted.Length))];
            try
            {
                await session.GetBlocksetAsync(f + 1);
                issues.Add(Text($"deleted blockset {f + 1} is still there"));
                break;
            }
            catch (BlocksetNotFoundException)
            {
            }
        }

        var gone = plan.CollectedBlocks;
        for (var i = 0; i < Math.Min(sample / 10, gone.Length); i++)
        {
            var b = gone[(int)((long)i * gone.Length / Math.Min(sample / 10, gone.Length))];
            if (await session.FindBlockAsync(BlockKey.Parse(plan.Hash(b), plan.Sizes[b])) is { } id)
            {
                issues.Add(Text($"collected block {b + 1} is still found (ID {id})"));
                break;
            }
        }

        var volumes = Math.Min(20, plan.Volumes);
        for (var i = 0; i < volumes; i++)
        {
            var v = 1 + ((long)i * plan.Volumes / volumes);
            var held = Math.Min(LifecyclePlan.BlocksPerVolume, plan.Blocks - ((v - 1) * LifecyclePlan.BlocksPerVolume));
            var left = held - plan.CollectedByVolume.GetValueOrDefault(v).Blocks;
            var info = await session.GetVolumeAsync(v);
            if (info.Blocks != left || info.UnreferencedBlocks != 0 || info.Name != LifecyclePlan.VolumeName(v) || info.State != VolumeState.Uploaded)
            {
                issues.Add(Text($"volume {v}: {info}, expected {left} blocks, none unreferenced, Uploaded"));
                break;
            }
        }
    }

    /// <summary>After a conversion: the new file opens with the target layout and a sample of blocksets lists as the plan says.</summary>
    public static async Task ConvertedAsync(string path, string provider, BlockLayout layout, LifecyclePlan plan, int sample, List<string> issues)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = path, ReadOnly = true };
        await using var db = BlockDatabase.Open(options);
        if (db.Layout != layout)
        {
            issues.Add($"the new file's layout is {db.Layout}, expected {layout}");
        }

        await using var session = await db.OpenSessionAsync();
        var counts = await session.GetCountsAsync();
        if (counts != new BlockDbCounts(plan.Blocks, plan.Blocksets, plan.Entries.Length))
        {
            issues.Add(Text($"the new file's counts are {counts}, expected ({plan.Blocks}, {plan.Blocksets}, {plan.Entries.Length})"));
        }

        await RemainingBlocksetsAsync(session, plan, sample, issues, afterDelete: false);
    }

    /// <summary>A sample of the blocksets (after a delete run: those it keeps), evenly spread: length, full hash, and each block in order, found by its hash.</summary>
    private static async Task RemainingBlocksetsAsync(IBlockReader reader, LifecyclePlan plan, int sample, List<string> issues, bool afterDelete)
    {
        var n = Math.Min(sample, plan.Blocksets);
        for (var i = 0; i < n; i++)
        {
            var f = (int)((long)i * plan.Blocksets / n);
            while (afterDelete && f < plan.Blocksets - 1 && plan.IsDeleted(f))
            {
                f++;
            }

            if (afterDelete && plan.IsDeleted(f))
            {
                continue;
            }

            var info = await reader.GetBlocksetAsync(f + 1);
            var first = plan.FileStarts[f];
            var count = plan.FileStarts[f + 1] - first;
            if (info.Length != plan.Length(f) || info.FullHash != plan.FullHash(f) || info.BlockCount != count)
            {
                issues.Add(Text($"blockset {f + 1}: {info}, expected length {plan.Length(f)}, {count} blocks"));
                return;
            }

            var blocks = new BlocksetBlock[count + 1]; // one more: a longer listing shows
            var listed = await reader.ListBlocksetBlocksAsync(f + 1, 0, blocks);
            for (var k = 0; k < count; k++)
            {
                var b = plan.Entries[first + k];
                var got = blocks[k];
                if (listed != count || got.Index != k || got.BlockId != b + 1 || got.Block.Hash.ToString() != plan.Hash(b) || got.Block.Size != plan.Sizes[b])
                {
                    issues.Add(Text($"blockset {f + 1} lists {listed} blocks; entry {k} is {got}, expected block {b + 1} ({plan.Sizes[b]} bytes)"));
                    return;
                }

                if (await reader.FindBlockAsync(got.Block) != b + 1)
                {
                    issues.Add(Text($"block {b + 1} of blockset {f + 1} is not found by its hash"));
                    return;
                }
            }
        }
    }

    private static string Text(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
