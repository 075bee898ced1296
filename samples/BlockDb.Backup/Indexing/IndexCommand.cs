using System.Diagnostics;
using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;
using BlockDb.Backup.Sidecar;
using BlockDb.Backup.Verification;
using BlockDb.Backup.Walking;
using Microsoft.Extensions.Logging;

namespace BlockDb.Backup.Indexing;

/// <summary><c>index DIRECTORY</c>: walks, cuts, hashes and records every regular file, then prints the summary table.</summary>
internal static class IndexCommand
{
    /// <summary>The block size when --block-size is not given (Duplicati's default, 1 MiB); a Duplicati database's own otherwise.</summary>
    private const long DefaultBlockSize = 1 << 20;

    /// <summary>Duplicati's own busy timeout, in milliseconds, when BlockDb:Pragmas sets none.</summary>
    private const int DuplicatiBusyTimeout = 10_000;

    public static async Task<int> RunAsync(CommonSettings common, IndexSettings settings, CancellationToken cancellationToken)
    {
        var root = Path.TrimEndingDirectorySeparator(Path.GetFullPath(settings.Directory));
        if (!Directory.Exists(root))
        {
            throw new UsageException($"'{root}' is not a directory.");
        }

        var pseudoMounts = PseudoFileSystems.MountPoints();
        if (pseudoMounts.Any(m => root == m || root.StartsWith(m + "/", StringComparison.Ordinal)))
        {
            throw new UsageException($"'{root}' is on a kernel pseudo file system (proc, sysfs, devtmpfs…); it holds no files to back up.");
        }

        using var metrics = MetricsSummary.Start();
        var duplicati = await PrepareDuplicatiAsync(common, settings).ConfigureAwait(false);
        var blockSize = duplicati?.Blocksize ?? settings.BlockSize ?? DefaultBlockSize;
        await using var app = AppServices.Create(common);
        var databasePath = app.DatabasePath;
        var sidecarPath = FileMap.PathFor(databasePath, duplicati is not null, app.DataFolder);
        var recordPath = settings.Record is { } record ? Path.GetFullPath(record) : null;
        Directory.CreateDirectory(Path.GetDirectoryName(databasePath)!);
        if (settings.Fresh)
        {
            DeleteDatabase(databasePath, sidecarPath);
        }

        await Console.Error.WriteLineAsync($"Indexing {root} into {databasePath} with provider {app.Options.Provider}").ConfigureAwait(false);
        if (duplicati is not null)
        {
            await Console.Error.WriteLineAsync(DuplicatiNotice(duplicati)).ConfigureAwait(false);
        }
        var database = app.Database;
        var stats = new IndexStats();
        var excluded = new HashSet<string>(OwnFiles(databasePath, sidecarPath), StringComparer.Ordinal);
        if (recordPath is not null)
        {
            excluded.Add(recordPath);
        }

        var clock = Stopwatch.StartNew();
        var walker = new FileWalker(stats, pseudoMounts, excluded);
        var (completed, volumes, counts) = await IndexAsync(app, database, walker, root, settings, blockSize, duplicati, sidecarPath, recordPath, stats, cancellationToken).ConfigureAwait(false);
        clock.Stop();
        IndexReport.Write(new IndexReport(database, root, settings, blockSize, duplicati, stats, volumes, counts, clock.Elapsed, completed, sidecarPath, recordPath));
        metrics.Write();
        if (!completed)
        {
            return ExitCodes.Cancelled;
        }

        return settings.Verify
            ? await VerifyCommand.RunAsync(app, new VerifySettings(root, settings.Sample, settings.Seed, settings.Progress), cancellationToken).ConfigureAwait(false)
            : ExitCodes.Success;
    }

    private static async Task<(bool Completed, VolumeWriter Volumes, BlockDbCounts Counts)> IndexAsync(
        AppServices app, IBlockDatabase database, FileWalker walker, string root, IndexSettings settings, long blockSize, DuplicatiTarget? duplicati, string sidecarPath, string? recordPath, IndexStats stats, CancellationToken cancellationToken)
    {
        await using var repository = await database.OpenSessionAsync(cancellationToken).ConfigureAwait(false);
        await using var sidecar = FileMap.OpenAppend(sidecarPath);
        await using var recorder = recordPath is null ? null : new BlockRecorder(recordPath);
        var volumes = await VolumeWriter.StartAsync(database, repository, settings.VolumeSize, stats, duplicati?.VolumeNames, cancellationToken).ConfigureAwait(false);
        var writer = new IndexWriter(repository, volumes, stats, sidecar, recorder, app.LoggerFactory.CreateLogger("blockdb-backup"), duplicati);
        var pipeline = new IndexPipeline(walker, checked((int)blockSize), settings.Hashers, writer);
        var completed = false;
        try
        {
            await ProgressDisplay.RunAsync(settings.Progress, "indexing", () => Status(stats), pipeline.RunAsync(root, cancellationToken)).ConfigureAwait(false);
            completed = true;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            await Console.Error.WriteLineAsync($"Cancelled: the open batch is ended as BlockDb:Batching:OnDispose says ({app.Options.Batching.OnDispose}).").ConfigureAwait(false);
        }
        finally
        {
            await writer.FinishAsync(completed ? DisposeBehavior.Commit : app.Options.Batching.OnDispose, completed).ConfigureAwait(false);
        }

        return (completed, volumes, await repository.GetCountsAsync(CancellationToken.None).ConfigureAwait(false));
    }

    /// <summary>
    /// When the database is a Duplicati local database (BlockDb recognises it; no flag), reads its settings and readies
    /// it (<see cref="DuplicatiTarget.Prepare"/>); <see langword="null"/> for any other database. BlockDb's probe is closed
    /// before the sample's own connection opens the file.
    /// </summary>
    /// <exception cref="UsageException">--fresh on a Duplicati database (it would delete the backup's database), or a setting <see cref="DuplicatiTarget.Prepare"/> refuses; nothing was written.</exception>
    private static async Task<DuplicatiTarget?> PrepareDuplicatiAsync(CommonSettings common, IndexSettings settings)
    {
        string path;
        int busyTimeout;
        await using (var probe = AppServices.Create(common))
        {
            path = probe.DatabasePath;
            if (probe.Options.ConnectionString is not null || !File.Exists(path) || new FileInfo(path).Length == 0 || probe.Database.Layout != BlockLayout.Duplicati)
            {
                return null;
            }

            // The busy timeout set, else the one BlockDb's connections run with (the preset's, read back), else Duplicati's.
            var applied = ((ISqliteBlockDatabase)probe.Database).AppliedPragmas.BusyTimeout;
            busyTimeout = probe.Options.Pragmas.BusyTimeout ?? (applied is > 0 ? applied.Value : DuplicatiBusyTimeout);
        }

        if (settings.Fresh)
        {
            throw new UsageException($"'{path}' is a Duplicati database: --fresh would delete the backup's database. Index into it without --fresh, or give another --db.");
        }

        return DuplicatiTarget.Prepare(path, settings.BlockSize, busyTimeout, DateTime.UtcNow);
    }

    private static string DuplicatiNotice(DuplicatiTarget duplicati) =>
        $"Duplicati database: block size {duplicati.Blocksize:N0} bytes and SHA256 from its Configuration; new blocks and blocklist blocks go into Blocks volumes left Temporary (no dblock file is written), registered under "
        + (duplicati.OperationInserted
            ? $"a new Operation row ({duplicati.OperationId}, 'Backup') that the sample inserted, as Duplicati does per run, because the file had none."
            : $"its latest Operation row ({duplicati.OperationId}).")
        + " No File or FilesetEntry rows are written: this is a block indexer, not a backup.";

    private static string Status(IndexStats s) =>
        $"{ReportTable.Count(s.FilesIndexed)} files recorded of {ReportTable.Count(s.FilesFound)} found, "
        + $"{ByteSize.Format(s.Bytes)} of {ByteSize.Format(s.BytesFound)}, {ReportTable.Count(s.Blocks)} blocks "
        + $"({ReportTable.Count(s.NewBlocks)} new), {ReportTable.Count(s.Volumes)} volumes, {ReportTable.Count(s.Skipped)} skipped";

    private static void DeleteDatabase(string databasePath, string sidecarPath)
    {
        foreach (var path in OwnFiles(databasePath, sidecarPath))
        {
            File.Delete(path);
        }
    }

    /// <summary>
    /// The files of the index: the database, SQLite's WAL, shared-memory and rollback-journal files, BlockDb's key-map
    /// snapshot (<c>&lt;database&gt;-blockdb-keymap</c>, see <c>BlockDb:Index:KeyMapFile</c>) and the sample's sidecar.
    /// Never indexed; <c>--fresh</c> deletes them all.
    /// </summary>
    private static string[] OwnFiles(string databasePath, string sidecarPath) =>
        [databasePath, databasePath + "-wal", databasePath + "-shm", databasePath + "-journal", databasePath + "-blockdb-keymap", sidecarPath];
}
