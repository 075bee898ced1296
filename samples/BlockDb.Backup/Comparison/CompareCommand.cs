using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;

namespace BlockDb.Backup.Comparison;

/// <summary>
/// <c>compare DB1 DB2 [...]</c>: checks that databases hold the same blocks (set of hash, size), the same blocksets
/// (multiset of length, full hash, ordered blocks), the same row counts, and, through their sidecars, the same
/// content for each path. Every database is compared with the first.
/// </summary>
internal static class CompareCommand
{
    private const int ExamplesShown = 5;

    public static async Task<int> RunAsync(CommonSettings common, IReadOnlyList<string> databases, CancellationToken cancellationToken)
    {
        if (databases.Count < 2)
        {
            throw new UsageException("compare needs at least two database files.");
        }

        var configuration = AppConfiguration.Build(common);
        var options = BlockDbConfiguration.Bind(configuration);
        var dataFolder = AppConfiguration.DataFolder(configuration);
        var paths = databases.Select(Path.GetFullPath).ToList();
        if (paths.FirstOrDefault(p => !File.Exists(p)) is { } absent)
        {
            throw new UsageException($"The database '{absent}' does not exist.");
        }

        using var loggerFactory = Microsoft.Extensions.Logging.LoggerFactory.Create(logging => AppServices.ConfigureLogging(logging, common.Verbose));
        var snapshots = new List<DatabaseSnapshot>();
        foreach (var path in paths)
        {
            await Console.Error.WriteLineAsync($"Reading {path} with provider {options.Provider}").ConfigureAwait(false);
            snapshots.Add(await SnapshotReader.ReadAsync(options, path, dataFolder, loggerFactory, cancellationToken).ConfigureAwait(false));
        }

        var differences = snapshots.Skip(1).Select(s => Differences(snapshots[0], s)).ToList();
        WriteTable(snapshots, differences);
        var all = differences.SelectMany(d => d).ToList();
        foreach (var difference in all)
        {
            await Console.Out.WriteLineAsync($"DIFFERENCE: {difference}").ConfigureAwait(false);
        }

        var unreferenced = snapshots.Where(s => s.UnreferencedBlocks > 0).ToList();
        foreach (var s in unreferenced)
        {
            await Console.Out.WriteLineAsync($"note: {s.Path} has {s.UnreferencedBlocks} blocks in no blockset ('gc' deletes them); only their count is compared.").ConfigureAwait(false);
        }

        await Console.Out.WriteLineAsync(all.Count == 0 ? $"SAME: all {snapshots.Count} databases hold the same blocks, blocksets and files." : $"DIFFERENT: {all.Count} difference(s).").ConfigureAwait(false);
        return all.Count == 0 ? ExitCodes.Success : ExitCodes.Difference;
    }

    private static List<string> Differences(DatabaseSnapshot first, DatabaseSnapshot other)
    {
        var name = Path.GetFileName(other.Path);
        var found = new List<string>();
        if (first.Counts != other.Counts)
        {
            found.Add($"{name}: row counts {Show(other.Counts)} differ from {Show(first.Counts)}");
        }

        if (first.BlocksDigest != other.BlocksDigest)
        {
            found.Add($"{name}: the set of referenced blocks (hash, size) differs");
        }

        if (first.BlocksetsDigest != other.BlocksetsDigest)
        {
            found.Add($"{name}: the multiset of blocksets (length, full hash, ordered blocks) differs");
        }

        if (first.PathDigests is { } a && other.PathDigests is { } b)
        {
            var onlyFirst = a.Keys.Where(p => !b.ContainsKey(p)).ToList();
            var onlyOther = b.Keys.Where(p => !a.ContainsKey(p)).ToList();
            var changed = a.Where(kv => b.TryGetValue(kv.Key, out var d) && d != kv.Value).Select(kv => kv.Key).ToList();
            AddPaths(found, $"{name}: {onlyFirst.Count} path(s) missing", onlyFirst);
            AddPaths(found, $"{name}: {onlyOther.Count} path(s) not in the first database", onlyOther);
            AddPaths(found, $"{name}: {changed.Count} path(s) with other content", changed);
        }

        return found;
    }

    private static void AddPaths(List<string> found, string what, List<string> paths)
    {
        if (paths.Count > 0)
        {
            found.Add($"{what}, e.g. {string.Join(", ", paths.Take(ExamplesShown))}");
        }
    }

    private static void WriteTable(List<DatabaseSnapshot> snapshots, List<List<string>> differences)
    {
        var table = new ReportTable("blockdb-backup compare", ["", .. snapshots.Select(s => Path.GetFileName(s.Path))]);
        Row(table, "file", snapshots, s => s.Path);
        Row(table, "read with provider", snapshots, s => s.Provider);
        Row(table, "SQLite version", snapshots, s => s.SqliteVersion);
        Row(table, "Block rows", snapshots, s => ReportTable.Count(s.Counts.Blocks));
        Row(table, "Blockset rows", snapshots, s => ReportTable.Count(s.Counts.Blocksets));
        Row(table, "BlocksetEntry rows", snapshots, s => ReportTable.Count(s.Counts.BlocksetEntries));
        Row(table, "blocks in no blockset", snapshots, s => ReportTable.Count(s.UnreferencedBlocks));
        Row(table, "blocks digest", snapshots, s => s.BlocksDigest[..16]);
        Row(table, "blocksets digest", snapshots, s => s.BlocksetsDigest[..16]);
        Row(table, "sidecar paths", snapshots, s => s.PathDigests is { } p ? ReportTable.Count(p.Count) : "no sidecar");
        Row(table, "read time", snapshots, s => ReportTable.Duration(s.Elapsed));
        table.Row(["same as first", "-", .. differences.Select(d => d.Count == 0 ? "yes" : $"NO ({d.Count})")]);
        table.Write();
    }

    private static void Row(ReportTable table, string name, List<DatabaseSnapshot> snapshots, Func<DatabaseSnapshot, string> cell) =>
        table.Row([name, .. snapshots.Select(cell)]);

    private static string Show(BlockDbCounts c) => $"{c.Blocks}/{c.Blocksets}/{c.BlocksetEntries}";
}
