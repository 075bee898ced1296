using BlockDb.Backup.Cli;
using BlockDb.Backup.Maintenance;
using BlockDb.Backup.Output;
using BlockDb.Backup.Sidecar;

namespace BlockDb.Backup.Lifecycle;

/// <summary>The options of <c>convert</c>.</summary>
/// <param name="Target">The new file; it must not exist.</param>
/// <param name="Layout">The new file's layout.</param>
/// <param name="MergeDuplicates">Merge duplicate blocks of the source into their lowest ID instead of refusing the source.</param>
/// <param name="Progress">How progress is shown.</param>
internal sealed record ConvertSettings(string Target, BlockLayout Layout, bool MergeDuplicates, ProgressMode Progress);

/// <summary>
/// <c>convert TARGET --layout L</c>: copies the index (<c>--db</c>) into a new file of another layout with
/// <see cref="BlockDbConverter.ConvertAsync"/>, every ID kept, then copies the sidecar next to it (the IDs it names are
/// the same), and prints what was copied and the new file's check. The source is opened read-only and not changed;
/// a failed or cancelled conversion leaves no new file.
/// </summary>
internal static class ConvertCommand
{
    /// <summary>Runs <c>convert</c> from the command line and prints its tables.</summary>
    public static async Task<int> RunAsync(CommonSettings common, ConvertSettings settings, CancellationToken cancellationToken)
    {
        await using var app = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false);
        var sourceBytes = new FileInfo(app.DatabasePath).Length;
        var progress = new LatestProgress();
        var work = ConvertAsync(app, settings, progress, cancellationToken);
        await ProgressDisplay.RunAsync(settings.Progress, "converting", progress.Status, work).ConfigureAwait(false);
        var (result, target) = await work.ConfigureAwait(false);
        var seconds = Math.Max(result.Elapsed.TotalSeconds, 1e-9);
        new ReportTable("blockdb-backup convert", "", "source", "new file")
            .Row("file", app.DatabasePath, target)
            .Row("layout", result.SourceLayout.ToString(), result.TargetLayout.ToString())
            .Row("file size", $"{ByteSize.Format(sourceBytes)} ({ReportTable.Count(sourceBytes)} bytes)", $"{ByteSize.Format(new FileInfo(target).Length)} ({ReportTable.Count(new FileInfo(target).Length)} bytes)")
            .Row("sidecar", FileMap.PathFor(app.DatabasePath), File.Exists(FileMap.PathFor(target)) ? FileMap.PathFor(target) : "(none: the source has none)")
            .Row("volumes copied", "", ReportTable.Count(result.Volumes))
            .Row("blocks copied", "", ReportTable.Count(result.Blocks))
            .Row("duplicates merged", "", ReportTable.Count(result.MergedDuplicates))
            .Row("blocksets copied", "", ReportTable.Count(result.Blocksets))
            .Row("blockset entries copied", "", ReportTable.Count(result.BlocksetEntries))
            .Row("elapsed (check included)", "", ReportTable.Duration(result.Elapsed))
            .Row("rows per second", "", ReportTable.Number((result.Volumes + result.Blocks + result.Blocksets + result.BlocksetEntries) / seconds, "N0"))
            .Write();
        CheckCommand.Table($"check of {target}", result.Check).Write();
        return result.Check.IsClean ? ExitCodes.Success : ExitCodes.Difference;
    }

    /// <summary>Converts, and copies the sidecar next to the new file.</summary>
    /// <param name="app">The services of the source database; its options open the source (read-only) and shape the target.</param>
    /// <param name="settings">The new file and its layout.</param>
    /// <param name="progress">Told how far the copy is.</param>
    /// <param name="cancellationToken">Cancels the copy; the new file is then deleted.</param>
    /// <returns>The conversion's result and the new file's full path.</returns>
    /// <exception cref="UsageException">The new file or its sidecar exists.</exception>
    public static async Task<(ConversionResult Result, string Target)> ConvertAsync(AppServices app, ConvertSettings settings, IProgress<ConversionProgress>? progress, CancellationToken cancellationToken)
    {
        var target = Path.GetFullPath(settings.Target);
        var targetSidecar = FileMap.PathFor(target);
        if (File.Exists(target) || File.Exists(targetSidecar))
        {
            throw new UsageException($"'{(File.Exists(target) ? target : targetSidecar)}' exists; convert writes a new file. Choose another path or delete it first.");
        }

        var source = app.Options.Clone();
        source.ReadOnly = true;
        source.Index.Layout = null;
        var options = app.Options.Clone();
        options.DataSource = target;
        options.ReadOnly = false;
        options.Index.Layout = settings.Layout;
        Directory.CreateDirectory(Path.GetDirectoryName(target)!);
        var result = await BlockDbConverter.ConvertAsync(
            source, options, new ConversionOptions { MergeDuplicates = settings.MergeDuplicates }, progress, app.LoggerFactory, cancellationToken).ConfigureAwait(false);
        var sourceSidecar = FileMap.PathFor(app.DatabasePath);
        if (File.Exists(sourceSidecar))
        {
            File.Copy(sourceSidecar, targetSidecar);
        }

        return (result, target);
    }

    /// <summary>Keeps the latest progress report (any thread) for the status line.</summary>
    private sealed class LatestProgress : IProgress<ConversionProgress>
    {
        private StrongBox? _latest;

        public void Report(ConversionProgress value) => Volatile.Write(ref _latest, new StrongBox(value));

        public string Status() => Volatile.Read(ref _latest) is { Value: var p }
            ? $"{p.Table}: {ReportTable.Count(p.Rows)} of {ReportTable.Count(p.TotalRows)} rows{(p.TotalRows > 0 ? $" ({ReportTable.Number((double)p.Rows / p.TotalRows, "P0")})" : "")}"
            : "starting";

        private sealed record StrongBox(ConversionProgress Value);
    }
}
