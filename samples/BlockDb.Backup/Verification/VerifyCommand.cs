using System.Diagnostics;
using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;
using BlockDb.Backup.Sidecar;

namespace BlockDb.Backup.Verification;

/// <summary><c>verify [DIRECTORY]</c>: reads the sidecar's blocksets back through the repository and re-reads the files.</summary>
internal static class VerifyCommand
{
    private const int MismatchesShown = 10;

    public static async Task<int> RunAsync(CommonSettings common, VerifySettings settings, CancellationToken cancellationToken)
    {
        await using var app = AppServices.Create(common);
        if (!File.Exists(app.DatabasePath))
        {
            throw new UsageException($"The database '{app.DatabasePath}' does not exist; run 'index' first (or give --db).");
        }

        return await RunAsync(app, settings, cancellationToken).ConfigureAwait(false);
    }

    public static async Task<int> RunAsync(AppServices app, VerifySettings settings, CancellationToken cancellationToken)
    {
        var sidecarPath = app.SidecarPath;
        var all = FileMap.Read(sidecarPath);
        var chosen = Choose(all, settings);
        var database = app.Database;
        await using var repository = await database.OpenSessionAsync(cancellationToken).ConfigureAwait(false);
        using var verifier = new FileVerifier(repository);
        var mismatches = new List<(string Path, string Problem)>();
        var done = 0;
        var failed = 0;
        var clock = Stopwatch.StartNew();
        var cancelled = false;
        var work = Task.Run(
            async () =>
            {
                foreach (var entry in chosen)
                {
                    if (await verifier.VerifyAsync(entry, cancellationToken).ConfigureAwait(false) is { } problem)
                    {
                        mismatches.Add((entry.Path, problem));
                        Interlocked.Increment(ref failed);
                    }

                    Interlocked.Increment(ref done);
                }
            },
            cancellationToken);
        try
        {
            await ProgressDisplay.RunAsync(settings.Progress, "verifying", () => $"{ReportTable.Count(Volatile.Read(ref done))} of {ReportTable.Count(chosen.Count)} files, {ReportTable.Count(Volatile.Read(ref failed))} mismatches", work).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            cancelled = true;
        }

        clock.Stop();
        var seconds = Math.Max(clock.Elapsed.TotalSeconds, 1e-9);
        new ReportTable("blockdb-backup verify", "", "value")
            .Row("status", cancelled ? "cancelled" : mismatches.Count == 0 ? "OK" : "MISMATCH")
            .Row("database", database.DataSource)
            .Row("provider", database.ProviderName)
            .Row("SQLite version", database.EngineVersion)
            .Row("sidecar", $"{sidecarPath} ({ReportTable.Count(all.Count)} files)")
            .Row("directory", settings.Directory ?? "(all)")
            .Row("sample", settings.Sample is { } n ? $"{ReportTable.Count(n)} at random (seed {settings.Seed?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "random"})" : "all")
            .Row("files verified", $"{ReportTable.Count(done)} of {ReportTable.Count(chosen.Count)}")
            .Row("blocks verified", ReportTable.Count(verifier.BlocksVerified))
            .Row("bytes verified", $"{ReportTable.Count(verifier.BytesVerified)} ({ByteSize.Format(verifier.BytesVerified)})")
            .Row("mismatches", ReportTable.Count(mismatches.Count))
            .Row("elapsed", ReportTable.Duration(clock.Elapsed))
            .Row("MB/s", ReportTable.Number(verifier.BytesVerified / 1e6 / seconds, "N1"))
            .Write();
        if (mismatches.Count > 0)
        {
            var list = new ReportTable($"first {Math.Min(MismatchesShown, mismatches.Count)} of {mismatches.Count} mismatches", "path", "problem");
            foreach (var (path, problem) in mismatches.Take(MismatchesShown))
            {
                list.Row(path, problem);
            }

            list.Write();
        }

        return cancelled ? ExitCodes.Cancelled : mismatches.Count == 0 ? ExitCodes.Success : ExitCodes.Difference;
    }

    private static List<FileMapEntry> Choose(List<FileMapEntry> all, VerifySettings settings)
    {
        var root = settings.Directory is { } d ? Path.TrimEndingDirectorySeparator(Path.GetFullPath(d)) : null;
        var candidates = root is null
            ? all
            : all.Where(e => e.Path.StartsWith(root + Path.DirectorySeparatorChar, StringComparison.Ordinal)).ToList();
        if (settings.Sample is not { } sample || sample >= candidates.Count)
        {
            return candidates;
        }

        // A partial Fisher-Yates shuffle picks the sample; it is then put back in walk order.
        var random = settings.Seed is { } seed ? new Random(seed) : Random.Shared;
        var order = Enumerable.Range(0, candidates.Count).ToArray();
        for (var i = 0; i < sample; i++)
        {
            var j = random.Next(i, order.Length);
            (order[i], order[j]) = (order[j], order[i]);
        }

        return [.. order.Take(sample).Order().Select(i => candidates[i])];
    }
}
