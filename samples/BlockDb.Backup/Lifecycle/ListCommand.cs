using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;
using BlockDb.Backup.Sidecar;

namespace BlockDb.Backup.Lifecycle;

/// <summary>
/// <c>list volumes|blocksets|blocks</c>: streams the index through <see cref="IBlockDatabase.EnumerateVolumesAsync"/>,
/// <see cref="IBlockDatabase.EnumerateBlocksetsAsync"/> and <see cref="IBlockDatabase.EnumerateBlocksAsync"/> (one read
/// snapshot each, beside a running writer), stopping after <c>--limit</c> rows.
/// </summary>
internal static class ListCommand
{
    /// <summary>Rows shown by <c>list blocksets</c> and <c>list blocks</c> without <c>--limit</c>.</summary>
    public const int DefaultLimit = 20;

    /// <summary>
    /// <c>list volumes</c>: each volume with its state, size, blocks, bytes, waste (blocks no blockset references, which
    /// <c>gc</c> deletes) and dead bytes (its size minus the bytes of the blocks it still holds: what <c>gc</c> left in the
    /// remote file, which only compaction reclaims), and the totals.
    /// </summary>
    public static async Task<int> VolumesAsync(CommonSettings common, int? limit, CancellationToken cancellationToken)
    {
        await using var app = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false);
        var table = new ReportTable($"volumes of {app.DatabasePath}", "id", "name", "state", "size", "blocks", "bytes", "waste (unreferenced)", "dead in remote file");
        var (count, shown, blocks, bytes, wasteBlocks, waste, size, dead) = (0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L);
        var byState = new SortedDictionary<VolumeState, int>();
        await foreach (var v in app.Database.EnumerateVolumesAsync(cancellationToken).ConfigureAwait(false))
        {
            count++;
            (blocks, bytes, wasteBlocks, waste, size) = (blocks + v.Blocks, bytes + v.BlockBytes, wasteBlocks + v.UnreferencedBlocks, waste + v.UnreferencedBytes, size + (v.State == VolumeState.Deleted ? 0 : v.Size ?? 0));
            byState[v.State] = byState.GetValueOrDefault(v.State) + 1;
            var deadBytes = v.Size is { } known && v.State != VolumeState.Deleted ? Math.Max(0, known - v.BlockBytes) : (long?)null;
            dead += deadBytes ?? 0;
            if (limit is null || shown < limit)
            {
                shown++;
                table.Row(
                    ReportTable.Count(v.Id),
                    v.Name,
                    v.State.ToString(),
                    v.Size is { } s ? ByteSize.Format(s) : "-",
                    ReportTable.Count(v.Blocks),
                    ByteSize.Format(v.BlockBytes),
                    v.UnreferencedBlocks == 0 ? "0" : $"{ReportTable.Count(v.UnreferencedBlocks)} blocks, {ByteSize.Format(v.UnreferencedBytes)} ({Share(v.UnreferencedBytes, v.BlockBytes)})",
                    deadBytes is { } d ? $"{ByteSize.Format(d)} ({Share(d, v.Size!.Value)})" : "-");
            }
        }

        table.Row(
            "",
            $"total: {ReportTable.Count(count)} volumes",
            string.Join(", ", byState.Select(kv => $"{kv.Value} {kv.Key}")),
            ByteSize.Format(size),
            ReportTable.Count(blocks),
            ByteSize.Format(bytes),
            $"{ReportTable.Count(wasteBlocks)} blocks, {ByteSize.Format(waste)} ({Share(waste, bytes)})",
            $"{ByteSize.Format(dead)} ({Share(dead, size)})");
        table.Write();
        Shown(shown, count);
        return ExitCodes.Success;
    }

    /// <summary><c>list blocksets</c>: the first blocksets with their length, block count, full hash and the files that name them.</summary>
    public static async Task<int> BlocksetsAsync(CommonSettings common, int? limit, CancellationToken cancellationToken)
    {
        await using var app = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false);
        var sidecarPath = app.SidecarPath;
        var files = File.Exists(sidecarPath) ? FileMap.Read(sidecarPath).ToLookup(e => e.BlocksetId) : null;
        var take = limit ?? DefaultLimit;
        var table = new ReportTable($"blocksets of {app.DatabasePath}", "id", "length", "blocks", "full hash", "files (sidecar)");
        var shown = 0;
        await foreach (var b in app.Database.EnumerateBlocksetsAsync(cancellationToken).ConfigureAwait(false))
        {
            if (shown == take)
            {
                break;
            }

            shown++;
            table.Row(ReportTable.Count(b.Id), $"{ReportTable.Count(b.Length)} ({ByteSize.Format(b.Length)})", ReportTable.Count(b.BlockCount), b.FullHash ?? "-", Files(files, b.Id));
        }

        table.Write();
        var counts = await CountsAsync(app.Database, cancellationToken).ConfigureAwait(false);
        Shown(shown, counts.Blocksets);
        return ExitCodes.Success;
    }

    /// <summary><c>list blocks</c>: the first blocks, all or one volume's, all or only unreferenced ones.</summary>
    public static async Task<int> BlocksAsync(CommonSettings common, string? volumeName, bool unreferenced, int? limit, CancellationToken cancellationToken)
    {
        await using var app = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false);
        var names = new Dictionary<long, VolumeInfo>();
        await foreach (var v in app.Database.EnumerateVolumesAsync(cancellationToken).ConfigureAwait(false))
        {
            names[v.Id] = v;
        }

        VolumeInfo? volume = null;
        if (volumeName is not null)
        {
            volume = names.Values.FirstOrDefault(v => v.Name == volumeName)
                ?? throw new UsageException($"No volume is named '{volumeName}' ('list volumes' shows them).");
        }

        var take = limit ?? DefaultLimit;
        var what = $"{(unreferenced ? "unreferenced blocks" : "blocks")}{(volume is null ? "" : $" of {volume.Name}")}";
        var table = new ReportTable($"{what} in {app.DatabasePath}", "id", "hash", "size", "volume");
        var shown = 0;
        var filter = new BlockFilter { VolumeId = volume?.Id, UnreferencedOnly = unreferenced };
        await foreach (var b in app.Database.EnumerateBlocksAsync(filter, cancellationToken).ConfigureAwait(false))
        {
            if (shown == take)
            {
                break;
            }

            shown++;
            table.Row(ReportTable.Count(b.Id), b.Block.Hash.ToString(), ReportTable.Count(b.Block.Size), b.VolumeId is { } id ? names.GetValueOrDefault(id)?.Name ?? $"#{id}" : "-");
        }

        table.Write();
        long? total = (volume, unreferenced) switch
        {
            ({ } v, false) => v.Blocks,
            ({ } v, true) => v.UnreferencedBlocks,
            (null, false) => (await CountsAsync(app.Database, cancellationToken).ConfigureAwait(false)).Blocks,
            _ => shown < take ? shown : null,
        };
        Shown(shown, total);
        return ExitCodes.Success;
    }

    private static async Task<BlockDbCounts> CountsAsync(IBlockDatabase database, CancellationToken cancellationToken)
    {
        await using var repository = await database.OpenSessionAsync(cancellationToken).ConfigureAwait(false);
        return await repository.GetCountsAsync(cancellationToken).ConfigureAwait(false);
    }

    private static string Files(ILookup<long, FileMapEntry>? files, long blocksetId)
    {
        if (files is null)
        {
            return "(no sidecar)";
        }

        var named = files[blocksetId].ToList();
        return named.Count switch
        {
            0 => "(none)",
            1 => named[0].Path,
            _ => $"{named[0].Path} and {ReportTable.Count(named.Count - 1)} more",
        };
    }

    private static void Shown(long shown, long? total) =>
        Console.Out.WriteLine(total is { } t ? $"{ReportTable.Count(shown)} of {ReportTable.Count(t)} shown." : $"{ReportTable.Count(shown)} shown (--limit to see more).");

    private static string Share(long part, long whole) => whole <= 0 ? "-" : ReportTable.Number((double)part / whole, "P0");
}
