using System.CommandLine;
using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;

namespace BlockDb.Backup.Maintenance;

/// <summary>
/// <c>info</c>: what an index is, without changing it: the provider and engine version, the layout, the row counts,
/// the pragmas in force, the key map's size and the volumes. Opens the database read-only, so it runs beside a backup
/// writing the same file.
/// </summary>
internal static class InfoCommand
{
    /// <summary>A hash no block has: a lookup of it loads the KeyMap layout's map, so its size can be shown.</summary>
    private const string ProbeHash = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

    /// <summary>The command, with the <c>--db</c> option and the settings every command takes from <see cref="BackupCli"/>.</summary>
    public static Command Create(Option<string?> db, Func<ParseResult, CommonSettings> common)
    {
        var noMap = new Option<bool>("--no-map") { Description = "Do not load the KeyMap layout's key map to report its size (seconds per 10 million blocks)" };
        var command = new Command("info", "Show the index without changing it (opened read-only): provider, engine and SQLite version, layout, row counts, pragmas in force, key map size, volumes")
        {
            db, noMap,
        };
        command.SetAction((r, ct) => CommandRunner.RunAsync(() => RunAsync(common(r), !r.GetValue(noMap), ct), ct));
        return command;
    }

    private static async Task<int> RunAsync(CommonSettings common, bool loadMap, CancellationToken cancellationToken)
    {
        // Read-only: never creates, upgrades or switches the journal mode of the file it reports on. A read-only open
        // refuses a journal mode other than the file's, so the file's own (from its header) is asked for.
        string path;
        await using (var probe = AppServices.Create(common))
        {
            path = probe.DatabasePath;
            if (probe.Options.ConnectionString is null && !File.Exists(path))
            {
                throw new UsageException($"The database '{path}' does not exist; run 'index' first (or give --db).");
            }
        }

        List<string> overrides = [$"--{BlockDbOptions.SectionName}:ReadOnly=true"];
        if (await FileJournalModeAsync(path, cancellationToken).ConfigureAwait(false) is { } journalMode)
        {
            overrides.Add($"--{BlockDbOptions.SectionName}:Pragmas:JournalMode={journalMode}");
        }

        await using var app = AppServices.Create(common with { ConfigurationArgs = [.. common.ConfigurationArgs, .. overrides] });

        var database = app.Database;
        BlockDbCounts counts;
        await using (var session = await database.OpenSessionAsync(cancellationToken).ConfigureAwait(false))
        {
            counts = await session.GetCountsAsync(cancellationToken).ConfigureAwait(false);
            if (loadMap && database.Layout == BlockLayout.KeyMap)
            {
                await session.FindBlockAsync(BlockKey.Parse(ProbeHash, 1), cancellationToken).ConfigureAwait(false);
            }
        }

        var volumes = new Dictionary<VolumeState, int>();
        long volumeBlocks = 0;
        await foreach (var volume in database.EnumerateVolumesAsync(cancellationToken).ConfigureAwait(false))
        {
            volumes[volume.State] = volumes.GetValueOrDefault(volume.State) + 1;
            volumeBlocks += volume.Blocks;
        }

        var sqlite = database as ISqliteBlockDatabase;
        var (mapBlocks, mapBytes) = sqlite?.KeyMapUsage ?? (0, 0);
        var table = new ReportTable($"blockdb info {database.DataSource}", string.Empty, "value")
            .Row("database", database.DataSource)
            .Row("file size", FileSize(app.DatabasePath, database))
            .Row("provider", database.ProviderName)
            .Row("engine", $"{database.Engine} {database.EngineVersion}")
            .Row("layout", database.Layout.ToString())
            .Row("blocks / blocksets / entries", $"{ReportTable.Count(counts.Blocks)} / {ReportTable.Count(counts.Blocksets)} / {ReportTable.Count(counts.BlocksetEntries)}")
            .Row("applied pragmas", sqlite is null ? "-" : ReportTable.Pragmas(sqlite.AppliedPragmas))
            .Row("key map", KeyMap(database.Layout, loadMap, mapBlocks, mapBytes))
            .Row("volumes", volumes.Count == 0
                ? "0"
                : $"{ReportTable.Count(volumes.Values.Sum())} ({string.Join(", ", volumes.OrderBy(v => v.Key).Select(v => $"{v.Value} {v.Key}"))}), holding {ReportTable.Count(volumeBlocks)} blocks");
        table.Write();
        return ExitCodes.Success;
    }

    /// <summary>
    /// The journal mode a SQLite file is in, from its header: bytes 18 and 19 (the write and read format versions)
    /// are 2 in WAL mode and 1 in a rollback mode, which a new connection reports as DELETE. Null: not a SQLite file
    /// (or a server), left to the configuration.
    /// </summary>
    private static async Task<JournalMode?> FileJournalModeAsync(string path, CancellationToken cancellationToken)
    {
        if (!File.Exists(path))
        {
            return null;
        }

        var header = new byte[100];
        await using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        var read = await file.ReadAtLeastAsync(header, header.Length, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false);
        if (read < header.Length || !header.AsSpan(0, 16).SequenceEqual("SQLite format 3\0"u8))
        {
            return null;
        }

        return header[18] == 2 ? JournalMode.Wal : JournalMode.Delete;
    }

    private static string KeyMap(BlockLayout layout, bool loaded, long blocks, long bytes) =>
        layout != BlockLayout.KeyMap ? "- (the layout has none)"
        : !loaded ? "not loaded (--no-map)"
        : $"{ReportTable.Count(blocks)} entries, {ByteSize.Format(bytes)}";

    private static string FileSize(string path, IBlockDatabase database)
    {
        if (database is not ISqliteBlockDatabase || !File.Exists(path))
        {
            return "-";
        }

        var wal = new FileInfo(path + "-wal");
        return $"{ByteSize.Format(new FileInfo(path).Length)}{(wal.Exists ? $" (+ {ByteSize.Format(wal.Length)} WAL)" : string.Empty)}";
    }
}
