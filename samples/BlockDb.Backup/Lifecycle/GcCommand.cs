using System.Diagnostics;
using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;

namespace BlockDb.Backup.Lifecycle;

/// <summary>One volume in a collection: before, what was deleted from it, and after.</summary>
/// <param name="Before">The volume before (its <see cref="VolumeInfo.UnreferencedBytes"/> is the waste the collection removes from the index).</param>
/// <param name="CollectedBlocks">Blocks deleted from it.</param>
/// <param name="CollectedBytes">Their bytes.</param>
/// <param name="After">The volume after.</param>
/// <param name="DeletedNow">The collection left it without any block, so it was set Deleting, then Deleted.</param>
internal sealed record GcVolume(VolumeInfo Before, long CollectedBlocks, long CollectedBytes, VolumeInfo After, bool DeletedNow)
{
    /// <summary>Bytes of the remote file that no block of the index names any more: its size minus the bytes of the blocks it still holds.</summary>
    public long? DeadBytes => After.Size is { } size ? Math.Max(0, size - After.BlockBytes) : null;
}

/// <summary>What <c>gc</c> did.</summary>
/// <param name="Volumes">The volumes looked at (every volume not Deleted before, or the one named), in ID order.</param>
/// <param name="WithoutVolume">Blocks recorded without a volume (by an index older than volumes) that were deleted, if any.</param>
/// <param name="Blocks">Blocks deleted in all.</param>
/// <param name="Bytes">Their bytes.</param>
/// <param name="Elapsed">The time taken.</param>
/// <param name="EmptyLeftToDuplicati">On a Duplicati database, the volumes without any block left as they were (<see langword="null"/> on any other database).</param>
internal sealed record GcResult(IReadOnlyList<GcVolume> Volumes, VolumeCollected? WithoutVolume, long Blocks, long Bytes, TimeSpan Elapsed, int? EmptyLeftToDuplicati = null);

/// <summary>
/// <c>gc [--volume NAME]</c>: garbage collection. Reads each volume's waste first (<see cref="VolumeInfo.UnreferencedBytes"/>:
/// blocks no blockset references, the compaction signal), deletes the unreferenced blocks with
/// <c>DeleteUnreferencedBlocksAsync</c> (all of them, or one volume's), then sets every Uploaded or Verified volume the
/// collection left without any block Deleting, then Deleted: its remote file could be removed. A volume still Temporary
/// is left alone (an index run may be filling it). On a Duplicati database no volume changes state: its volumes are
/// Duplicati's, whose compact deletes a volume's remote file (and its index volume) before it records the volume
/// Deleted; the sample deletes no remote file, so a volume it set Deleted would still be on the backend, and the
/// collected blocks went to <c>DeletedBlock</c> (Duplicati's own collection), where its compact finds them.
/// </summary>
internal static class GcCommand
{
    /// <summary>The share of a volume's size that is dead above which Duplicati compacts it (its default <c>--threshold</c>, 25 %).</summary>
    public const double CompactThreshold = 0.25;

    /// <summary>Runs <c>gc</c> from the command line and prints its table.</summary>
    public static async Task<int> RunAsync(CommonSettings common, string? volumeName, CancellationToken cancellationToken)
    {
        await using var app = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false);
        var result = await CollectAsync(app.Database, volumeName, cancellationToken).ConfigureAwait(false);
        Write(result, app.DatabasePath);
        return ExitCodes.Success;
    }

    /// <summary>Collects, and deletes the volumes left empty.</summary>
    /// <param name="database">The database.</param>
    /// <param name="volumeName">Only this volume; all when <see langword="null"/>.</param>
    /// <param name="cancellationToken">Cancels between calls.</param>
    /// <returns>Per volume, before and after.</returns>
    /// <exception cref="UsageException">No volume has that name.</exception>
    public static async Task<GcResult> CollectAsync(IBlockDatabase database, string? volumeName, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        await using var repository = await database.OpenSessionAsync(cancellationToken).ConfigureAwait(false);
        List<VolumeInfo> before = [];
        long? volumeId = null;
        if (volumeName is not null)
        {
            var volume = await repository.FindVolumeAsync(volumeName, cancellationToken).ConfigureAwait(false)
                ?? throw new UsageException($"No volume is named '{volumeName}' ('list volumes' shows them).");
            before.Add(volume);
            volumeId = volume.Id;
        }
        else
        {
            await foreach (var volume in database.EnumerateVolumesAsync(cancellationToken).ConfigureAwait(false))
            {
                if (volume.State != VolumeState.Deleted)
                {
                    before.Add(volume);
                }
            }
        }

        var collected = await repository.DeleteUnreferencedBlocksAsync(volumeId, cancellationToken).ConfigureAwait(false);
        await repository.CommitAsync(cancellationToken).ConfigureAwait(false);
        var byVolume = collected.ByVolume.Where(v => v.VolumeId is not null).ToDictionary(v => v.VolumeId!.Value);
        var rows = new List<GcVolume>(before.Count);
        var duplicati = database.Layout == BlockLayout.Duplicati;
        var leftToDuplicati = 0;
        foreach (var volume in before)
        {
            var after = await repository.GetVolumeAsync(volume.Id, cancellationToken).ConfigureAwait(false);
            var deletedNow = false;
            if (duplicati)
            {
                leftToDuplicati += after.Blocks == 0 && after.State is VolumeState.Uploaded or VolumeState.Verified ? 1 : 0;
            }
            else if (after.Blocks == 0 && after.State is VolumeState.Uploaded or VolumeState.Verified or VolumeState.Deleting)
            {
                if (after.State != VolumeState.Deleting)
                {
                    await repository.SetVolumeStateAsync(volume.Id, VolumeState.Deleting, null, cancellationToken).ConfigureAwait(false);
                }

                await repository.SetVolumeStateAsync(volume.Id, VolumeState.Deleted, null, cancellationToken).ConfigureAwait(false);
                after = after with { State = VolumeState.Deleted };
                deletedNow = true;
            }

            var gone = byVolume.GetValueOrDefault(volume.Id);
            rows.Add(new GcVolume(volume, gone.Blocks, gone.Bytes, after, deletedNow));
        }

        await repository.CommitAsync(cancellationToken).ConfigureAwait(false);
        var withoutVolume = collected.ByVolume.Where(v => v.VolumeId is null).Select(v => (VolumeCollected?)v).FirstOrDefault();
        return new GcResult(rows, withoutVolume, collected.Blocks, collected.Bytes, clock.Elapsed, duplicati ? leftToDuplicati : null);
    }

    private static void Write(GcResult result, string databasePath)
    {
        var table = new ReportTable($"blockdb-backup gc of {databasePath}", "volume", "state", "size", "blocks", "waste before", "collected", "left", "dead in remote file");
        foreach (var v in result.Volumes)
        {
            var b = v.Before;
            var a = v.After;
            table.Row(
                b.Name,
                v.DeletedNow ? $"{b.State} → Deleted" : a.State.ToString(),
                b.Size is { } size ? ByteSize.Format(size) : "-",
                ReportTable.Count(b.Blocks),
                $"{ByteSize.Format(b.UnreferencedBytes)} ({Share(b.UnreferencedBytes, b.Size ?? b.BlockBytes)})",
                $"{ReportTable.Count(v.CollectedBlocks)} blocks, {ByteSize.Format(v.CollectedBytes)}",
                $"{ReportTable.Count(a.Blocks)} blocks, {ByteSize.Format(a.BlockBytes)}",
                v.DeadBytes is { } dead && a.Size is { } s ? $"{ByteSize.Format(dead)} ({Share(dead, s)})" : "-");
        }

        if (result.WithoutVolume is { } none)
        {
            table.Row("(no volume)", "-", "-", "-", "-", $"{ReportTable.Count(none.Blocks)} blocks, {ByteSize.Format(none.Bytes)}", "-", "-");
        }

        var live = result.Volumes.Where(v => v.After.State != VolumeState.Deleted).ToList();
        table.Row(
            "total",
            $"{ReportTable.Count(result.Volumes.Count(v => v.DeletedNow))} deleted now",
            $"{ByteSize.Format(result.Volumes.Sum(v => v.Before.Size ?? 0))} → {ByteSize.Format(live.Sum(v => v.After.Size ?? 0))}",
            ReportTable.Count(result.Volumes.Sum(v => v.Before.Blocks)),
            ByteSize.Format(result.Volumes.Sum(v => v.Before.UnreferencedBytes)),
            $"{ReportTable.Count(result.Blocks)} blocks, {ByteSize.Format(result.Bytes)}",
            $"{ReportTable.Count(live.Sum(v => v.After.Blocks))} blocks, {ByteSize.Format(live.Sum(v => v.After.BlockBytes))}",
            ByteSize.Format(live.Sum(v => v.DeadBytes ?? 0)));
        table.Write();
        var candidates = live.Count(v => v.After.Size is > 0 && v.DeadBytes > v.After.Size * CompactThreshold);
        Console.Out.WriteLine(
            $"Collected {ReportTable.Count(result.Blocks)} blocks ({ByteSize.Format(result.Bytes)}) in {ReportTable.Duration(result.Elapsed)}; "
            + $"{ReportTable.Count(result.Volumes.Count(v => v.DeletedNow))} volumes left empty were deleted; "
            + $"{ReportTable.Count(candidates)} of {ReportTable.Count(live.Count)} remaining volumes are more than {ReportTable.Number(CompactThreshold, "P0")} dead (Duplicati's compaction threshold).");
        if (result.EmptyLeftToDuplicati is { } empty)
        {
            // Through Spectre.Console, as the table (the same standard output).
            Spectre.Console.AnsiConsole.WriteLine(
                $"A Duplicati database: the collected blocks went to DeletedBlock and no volume changed state; {ReportTable.Count(empty)} Uploaded or Verified volumes hold no block, for Duplicati's compact to delete with their remote files.");
        }
    }

    private static string Share(long part, long whole) => whole <= 0 ? "-" : ReportTable.Number((double)part / whole, "P0");
}
