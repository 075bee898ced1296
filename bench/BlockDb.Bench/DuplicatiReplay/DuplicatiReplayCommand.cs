using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Cli;
using BlockDb.Bench.Lifecycle;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Consistency;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;
using Microsoft.Data.Sqlite;

namespace BlockDb.Bench.DuplicatiReplay;

/// <summary>
/// The <c>duplicati-replay</c> subcommand (issue 24, item 5, Duplicati's side): Duplicati's own statement sequence for a
/// backup (<see cref="DuplicatiBackupReplay"/>) into a new Duplicati v19 file, from a synthetic source of a given number
/// of data blocks, then incremental backups of the next source versions; blocks/s and files/s per backup, and Duplicati's
/// consistency rules checked on the file after the runs. Each implementation (<see cref="ReplayImplementations"/>) runs
/// the same backups on its own copy of the same new file.
/// </summary>
internal static class DuplicatiReplayCommand
{
    public static Command Create()
    {
        var smoke = new Option<bool>("--smoke") { Description = "Seconds: 3,000 blocks, two backups, every implementation, the file checked; exits 1 on any failure or finding (CI)." };
        var blocks = ListParser.ListOption("--blocks", "Data blocks of the first backup, e.g. 1e5,1e6,1e7 (default 1e5,1e6).");
        var versions = new Option<int?>("--versions") { Description = "Backups per file: the first, then incremental ones of the next source versions (default 2)." };
        var implementations = ListParser.ListOption("--implementations", $"Implementations of the backup's database calls: {string.Join(", ", ReplayImplementations.All.Select(i => i.Name))} (default all).");
        var blocksize = new Option<int?>("--blocksize") { Description = "Block size in bytes (default Duplicati's 1048576)." };
        var seed = new Option<int?>("--seed") { Description = "Source seed (default 42)." };
        var check = new Option<bool?>("--check") { Description = "Check the file by Duplicati's rules after the backups (default true; untimed)." };
        var work = new Option<DirectoryInfo?>("--work") { Description = "Folder for the files (default $TMPDIR/blockdb-bench/duplicati-replay); each file is deleted after its runs." };
        var keep = new Option<bool>("--keep") { Description = "Keep the files." };
        var command = new Command("duplicati-replay", "Issue 24: Duplicati's own backup statement sequence on a Duplicati v19 file (Microsoft.Data.Sqlite, Duplicati's pragmas); blocks/s and files/s, side by side per implementation.")
        {
            smoke, blocks, versions, implementations, blocksize, seed, check, work, keep,
        };
        command.SetAction(async (result, cancellationToken) =>
        {
            List<long> sizes;
            List<ReplayImplementation> chosen;
            try
            {
                var isSmoke = result.GetValue(smoke);
                sizes = ListParser.Values(result, blocks)?.Select(ListParser.Size).Distinct().ToList() ?? (isSmoke ? [3_000] : [100_000, 1_000_000]);
                chosen = ListParser.Values(result, implementations)?.Select(ReplayImplementations.Get).Distinct().ToList() ?? [.. ReplayImplementations.All];
                if (sizes.Any(s => s < 1) || (result.GetValue(versions) ?? 2) < 1)
                {
                    throw new ArgumentException("--blocks and --versions must be at least 1.");
                }
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine(e.Message);
                return 2;
            }

#if DEBUG
            Console.WriteLine("WARNING: this is a Debug build; measure with -c Release.");
#endif
            var configuration = new DuplicatiConfiguration { Blocksize = result.GetValue(blocksize) ?? DuplicatiConstants.DefaultBlocksize };
            var source = new SyntheticSourceOptions { Seed = result.GetValue(seed) ?? 42 };
            var folder = result.GetValue(work)?.FullName ?? Path.Combine(Path.GetTempPath(), "blockdb-bench", "duplicati-replay");
            Directory.CreateDirectory(folder);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Duplicati replay: SQLite {SqliteVersion()}, {Environment.ProcessorCount} cores, block size {configuration.Blocksize}, volumes {configuration.VolumeSize >> 20} MiB, {(result.GetValue(versions) ?? 2)} backups per file."));
            Console.WriteLine("Source: " + Describe(source));
            foreach (var implementation in chosen)
            {
                Console.WriteLine($"  {implementation.Name}: {implementation.Description}");
            }

            Console.WriteLine();
            Console.WriteLine("| blocks | backup | implementation | files | files read | data blocks | new blocks | s | blocks/s | files/s | x duplicati | file MiB | load (1 min) |");
            Console.WriteLine("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
            var failures = 0;
            foreach (var size in sizes)
            {
                var versionsPerFile = result.GetValue(versions) ?? 2;
                var first = SyntheticBackupSource.WithBlocks(source, configuration.Blocksize, size);
                var template = Path.Combine(folder, string.Create(CultureInfo.InvariantCulture, $"empty-{Guid.NewGuid():N}.sqlite"));
                DuplicatiSchema.CreateFile(template);
                var baseline = new Dictionary<int, (double Seconds, long FilesRead)>();
                try
                {
                    foreach (var implementation in chosen)
                    {
                        var path = Path.Combine(folder, string.Create(CultureInfo.InvariantCulture, $"{implementation.Name}-{size}-{Guid.NewGuid():N}.sqlite"));
                        if (implementation.WritesFile)
                        {
                            File.Copy(template, path);
                            implementation.PrepareFile?.Invoke(path);
                        }

                        try
                        {
                            var version = first;
                            for (var v = 0; v < versionsPerFile; v++)
                            {
                                version = v == 0 ? first : version.Next();
                                var load = LifecycleStudy.LoadAverage();
                                var clock = Stopwatch.StartNew();
                                BackupReplayResult run;
                                await using (var db = await implementation.OpenBackup(path, version.TimeUtc, cancellationToken))
                                {
                                    run = await new DuplicatiBackupReplay(configuration).BackupAsync(db, version, cancellationToken);
                                }

                                var seconds = clock.Elapsed.TotalSeconds;
                                if (implementation == ReplayImplementations.Duplicati)
                                {
                                    baseline[v] = (seconds, run.FilesRead);
                                }

                                // A ratio only where the other implementation did the same work (the same files read).
                                var ratio = baseline.TryGetValue(v, out var b) && implementation != ReplayImplementations.Duplicati && b.FilesRead == run.FilesRead
                                    ? (b.Seconds / seconds).ToString("F2", CultureInfo.InvariantCulture)
                                    : "";
                                var mib = implementation.WritesFile ? new FileInfo(path).Length / 1048576.0 : 0;
                                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                                    $"| {size:N0} | {(v == 0 ? "first" : $"incremental {v}")} | {implementation.Name} | {run.Files:N0} | {run.FilesRead:N0} | {run.DataBlocks:N0} | {run.NewBlocks:N0} | {seconds:F2} | {run.DataBlocks / seconds:N0} | {run.Files / seconds:N0} | {ratio} | {mib:F0} | {load:F2} |"));
                            }

                            if (implementation.WritesFile && (result.GetValue(check) ?? true))
                            {
                                var clock = Stopwatch.StartNew();
                                var missing = implementation.Missing ?? [];
                                var findings = DuplicatiConsistency.CheckFile(path, new DuplicatiConsistencyOptions { AllowMissingIndex = n => missing.Contains(n, StringComparer.OrdinalIgnoreCase) });
                                Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{implementation.Name} at {size:N0} blocks: {findings.Count} finding(s) by Duplicati's rules ({clock.Elapsed.TotalSeconds:F1} s to check)."));
                                foreach (var finding in findings)
                                {
                                    Console.Error.WriteLine("  " + finding);
                                }

                                failures += findings.Count;
                            }
                        }
                        catch (Exception e) when (e is InvalidOperationException or SqliteException or IOException)
                        {
                            Console.Error.WriteLine($"{implementation.Name} at {size:N0} blocks failed: {e}");
                            failures++;
                        }
                        finally
                        {
                            if (!result.GetValue(keep))
                            {
                                Delete(path);
                            }
                        }
                    }
                }
                finally
                {
                    Delete(template);
                }
            }

            Console.WriteLine();
            Console.WriteLine("blocks/s: data blocks of the files read per second; files/s: files examined per second; s: the backup from opening the database object to closing it (source generation and hashing included); x duplicati: duplicati's seconds over this implementation's for the same backup (blank where the work differs).");
            return failures == 0 ? 0 : 1;
        });
        return command;
    }

    private static string Describe(SyntheticSourceOptions o) => string.Create(CultureInfo.InvariantCulture,
        $"seed {o.Seed}; file sizes log-normal (median {o.MedianFileBytes / 1024:F0} KiB, sigma {o.Sigma}, max {o.MaxFileBytes >> 20} MiB), {o.EmptyFileShare:P0} empty, {o.DuplicateFileShare:P0} copies of an earlier file, {o.CommonBlockShare:P0} of full blocks from a pool of {o.CommonBlockPool}; next version: {o.ModifyShare:P0} modified, {o.TouchShare:P0} touched, {o.DeleteShare:P0} deleted, {o.NewShare:P0} new.");

    private static string SqliteVersion()
    {
        using var connection = new SqliteConnection("Data Source=:memory:");
        connection.Open();
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT sqlite_version()";
        return (string)command.ExecuteScalar()!;
    }

    private static void Delete(string path)
    {
        foreach (var file in new[] { path, path + "-wal", path + "-shm" })
        {
            if (File.Exists(file))
            {
                File.Delete(file);
            }
        }
    }
}
