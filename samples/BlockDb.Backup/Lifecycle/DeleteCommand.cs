using System.Diagnostics;
using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;
using BlockDb.Backup.Sidecar;

namespace BlockDb.Backup.Lifecycle;

/// <summary>The options of <c>delete</c>.</summary>
/// <param name="Path">Only files at or under this path (a file or a folder); all files when <see langword="null"/>.</param>
/// <param name="Fraction">The share of those files to delete, chosen evenly in sidecar order (0.5: every other file); 1: all of them.</param>
/// <param name="DryRun">Report what would be deleted, change nothing.</param>
internal sealed record DeleteSettings(string? Path, double Fraction, bool DryRun);

/// <summary>What <c>delete</c> did.</summary>
/// <param name="SidecarFiles">Files in the sidecar before.</param>
/// <param name="Files">Files chosen and taken out of the sidecar.</param>
/// <param name="Bytes">Their lengths added up.</param>
/// <param name="BlocksetsDeleted">Blocksets deleted: those only chosen files named.</param>
/// <param name="BlocksetsShared">Blocksets of chosen files kept because a file that stays names them too (a copy, an empty file).</param>
/// <param name="BlocksetsMissing">Blocksets that were already gone (an interrupted earlier delete).</param>
/// <param name="FilesLeft">Files left in the sidecar.</param>
/// <param name="DryRun">Nothing was changed.</param>
/// <param name="Elapsed">The time taken.</param>
/// <param name="BlocksetsDuplicatis">On a Duplicati database, blocksets kept because Duplicati's own files or metadata name them (the indexed file's content was already in the backup).</param>
internal sealed record DeleteResult(int SidecarFiles, int Files, long Bytes, int BlocksetsDeleted, int BlocksetsShared, int BlocksetsMissing, int FilesLeft, bool DryRun, TimeSpan Elapsed, int BlocksetsDuplicatis = 0);

/// <summary>
/// <c>delete [PATH] [--fraction F]</c>: drops files from the backup. The chosen files' lines leave the sidecar (so
/// <c>verify</c> no longer looks at them), then each blockset that no remaining file names is deleted with
/// <c>DeleteBlocksetAsync</c> (its entries go with it; its blocks stay until <c>gc</c>) and the batch is committed. The
/// sidecar is rewritten first so that it never names a deleted blockset: a crash in between leaves blocksets no file
/// names, which hold their blocks but break nothing. On a Duplicati database a blockset that Duplicati's own files or
/// metadata name (a file whose content was in the backup already) is Duplicati's: BlockDb refuses to delete it
/// (<see cref="BlockDbConflictException"/>, nothing written) and it is kept and counted.
/// </summary>
internal static class DeleteCommand
{
    /// <summary>Runs <c>delete</c> from the command line and prints its table.</summary>
    public static async Task<int> RunAsync(CommonSettings common, DeleteSettings settings, CancellationToken cancellationToken)
    {
        await using var app = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false);
        var result = await DeleteAsync(app, settings, cancellationToken).ConfigureAwait(false);
        var table = new ReportTable("blockdb-backup delete", "", "value")
            .Row("status", result.DryRun ? "dry run: nothing changed" : "completed")
            .Row("database", app.DatabasePath)
            .Row("chosen", $"{(settings.Path is { } p ? $"files under {Path.GetFullPath(p)}" : "all files")}, fraction {ReportTable.Number(settings.Fraction, "0.###")} (evenly in sidecar order)")
            .Row("files in the sidecar", ReportTable.Count(result.SidecarFiles))
            .Row("files deleted", $"{ReportTable.Count(result.Files)} ({ByteSize.Format(result.Bytes)})")
            .Row("blocksets deleted", ReportTable.Count(result.BlocksetsDeleted))
            .Row("blocksets kept (named by a file that stays)", ReportTable.Count(result.BlocksetsShared))
            .Row("blocksets already gone", ReportTable.Count(result.BlocksetsMissing));
        if (app.Database.Layout == BlockLayout.Duplicati)
        {
            table.Row("blocksets kept (named by Duplicati's files or metadata)", ReportTable.Count(result.BlocksetsDuplicatis));
        }

        table
            .Row("files left in the sidecar", ReportTable.Count(result.FilesLeft))
            .Row("elapsed", ReportTable.Duration(result.Elapsed))
            .Write();
        if (!result.DryRun && result.BlocksetsDeleted > 0)
        {
            await Console.Out.WriteLineAsync("The blocks only these blocksets used are now unreferenced: 'gc' deletes them.").ConfigureAwait(false);
        }

        return ExitCodes.Success;
    }

    /// <summary>Chooses the files, rewrites the sidecar without them and deletes the blocksets only they named.</summary>
    /// <param name="app">The services of the database (whose sidecar is read).</param>
    /// <param name="settings">Which files.</param>
    /// <param name="cancellationToken">Cancels between deletes; the batch is then ended as <c>BlockDb:Batching:OnDispose</c> says.</param>
    /// <returns>What was deleted.</returns>
    /// <exception cref="UsageException">The sidecar is missing or malformed, or the fraction is out of range.</exception>
    public static async Task<DeleteResult> DeleteAsync(AppServices app, DeleteSettings settings, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        var sidecarPath = app.SidecarPath;
        var all = FileMap.Read(sidecarPath);
        var (chosen, kept) = Choose(all, settings.Path, settings.Fraction);
        var stillNamed = kept.Select(e => e.BlocksetId).ToHashSet();
        var candidates = chosen.Select(e => e.BlocksetId).Distinct().ToList();
        var toDelete = candidates.Where(id => !stillNamed.Contains(id)).ToList();
        var missing = 0;
        var duplicatis = 0;
        if (!settings.DryRun && chosen.Count > 0)
        {
            FileMap.Rewrite(sidecarPath, kept);
            await using var repository = await app.Database.OpenSessionAsync(cancellationToken).ConfigureAwait(false);
            foreach (var id in toDelete)
            {
                try
                {
                    await repository.DeleteBlocksetAsync(id, cancellationToken).ConfigureAwait(false);
                }
                catch (BlocksetNotFoundException)
                {
                    missing++;
                }
                catch (BlockDbConflictException) when (app.Database.Layout == BlockLayout.Duplicati)
                {
                    duplicatis++;
                }
            }

            await repository.CommitAsync(cancellationToken).ConfigureAwait(false);
        }

        return new DeleteResult(
            all.Count, chosen.Count, chosen.Sum(e => e.Length), toDelete.Count - missing - duplicatis, candidates.Count - toDelete.Count, missing, kept.Count, settings.DryRun, clock.Elapsed, duplicatis);
    }

    /// <summary>
    /// Splits the sidecar's files into those to delete and those to keep: among the files at or under
    /// <paramref name="path"/> (all when <see langword="null"/>), <paramref name="fraction"/> of them spread evenly in
    /// sidecar order (file <c>i</c> is chosen when <c>floor((i + 1) · f) &gt; floor(i · f)</c>: with 0.5 the 2nd, 4th,
    /// 6th…), so the same sidecar always gives the same choice.
    /// </summary>
    /// <exception cref="UsageException">The fraction is not above 0 and at most 1.</exception>
    public static (List<FileMapEntry> Chosen, List<FileMapEntry> Kept) Choose(IReadOnlyList<FileMapEntry> all, string? path, double fraction)
    {
        if (!(fraction > 0 && fraction <= 1))
        {
            throw new UsageException($"--fraction is {fraction}; give a number above 0 and at most 1 (0.5: every other file).");
        }

        var root = path is null ? null : Path.TrimEndingDirectorySeparator(Path.GetFullPath(path));
        var prefix = root is null ? null : Path.EndsInDirectorySeparator(root) ? root : root + Path.DirectorySeparatorChar;
        var chosen = new List<FileMapEntry>();
        var kept = new List<FileMapEntry>();
        long candidate = 0;
        foreach (var entry in all)
        {
            var isCandidate = root is null || entry.Path == root || entry.Path.StartsWith(prefix!, StringComparison.Ordinal);
            if (isCandidate && Math.Floor((candidate + 1) * fraction) > Math.Floor(candidate * fraction))
            {
                chosen.Add(entry);
            }
            else
            {
                kept.Add(entry);
            }

            if (isCandidate)
            {
                candidate++;
            }
        }

        return (chosen, kept);
    }
}
