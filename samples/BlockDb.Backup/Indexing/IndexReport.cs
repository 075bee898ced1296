using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;

namespace BlockDb.Backup.Indexing;

/// <summary>The final table of <c>index</c>.</summary>
internal sealed record IndexReport(
    IBlockDatabase Database,
    string Root,
    IndexSettings Settings,
    long BlockSize,
    DuplicatiTarget? Duplicati,
    IndexStats Stats,
    VolumeWriter Volumes,
    BlockDbCounts Counts,
    TimeSpan Elapsed,
    bool Completed,
    string SidecarPath,
    string? RecordPath)
{
    public static void Write(IndexReport r)
    {
        var s = r.Stats;
        var seconds = Math.Max(r.Elapsed.TotalSeconds, 1e-9);
        var options = r.Database.Options;
        var table = new ReportTable("blockdb-backup index", "", "value")
            .Row("status", r.Completed ? "completed" : $"cancelled (open batch: {options.Batching.OnDispose})")
            .Row("directory", r.Root)
            .Row("database", r.Database.DataSource)
            .Row("sidecar", r.SidecarPath)
            .Row("provider", r.Database.ProviderName)
            .Row("SQLite version", r.Database.EngineVersion)
            .Row("applied pragmas", r.Database is ISqliteBlockDatabase sqlite ? ReportTable.Pragmas(sqlite.AppliedPragmas) : "-")
            .Row("batching", $"CommitEvery={options.Batching.CommitEvery} OnDispose={options.Batching.OnDispose}")
            .Row("select-xor-insert", options.SelectXorInsert.ToString())
            .Row("block size", $"{ByteSize.Format(r.BlockSize)} ({ReportTable.Count(r.BlockSize)} bytes){(r.Duplicati is null ? string.Empty : ", the Duplicati database's")}")
            .Row("hasher tasks", r.Settings.Hashers.ToString(System.Globalization.CultureInfo.InvariantCulture))
            .Row("files indexed", ReportTable.Count(s.FilesIndexed))
            .Row("skipped", $"{ReportTable.Count(s.Skipped)} ({ReportTable.Count(s.Symlinks)} symlinks, {ReportTable.Count(s.Special)} special, {ReportTable.Count(s.Unreadable)} unreadable, {ReportTable.Count(s.OwnFiles)} own db files)")
            .Row("pseudo-fs mounts not entered", ReportTable.Count(s.PseudoDirectories))
            .Row("empty files (blockset of length 0)", ReportTable.Count(s.Empty))
            .Row("bytes", $"{ReportTable.Count(s.Bytes)} ({ByteSize.Format(s.Bytes)})")
            .Row("blocks", ReportTable.Count(s.Blocks))
            .Row("distinct blocks (new Block rows)", $"{ReportTable.Count(s.NewBlocks)} ({ByteSize.Format(s.NewBytes)})")
            .Row("dedup ratio", DedupRatio(s))
            .Row("blocksets", $"{ReportTable.Count(s.NewBlocksets)} new, {ReportTable.Count(s.ReusedBlocksets)} reused (same full hash and length)")
            .Row("volume size", $"{ByteSize.Format(r.Settings.VolumeSize)} ({ReportTable.Count(r.Settings.VolumeSize)} bytes of new blocks)")
            .Row("volumes written", VolumesWritten(r.Volumes))
            .Row("rows in file (Block/Blockset/Entry)", $"{ReportTable.Count(r.Counts.Blocks)} / {ReportTable.Count(r.Counts.Blocksets)} / {ReportTable.Count(r.Counts.BlocksetEntries)}")
            .Row("elapsed", ReportTable.Duration(r.Elapsed))
            .Row("blocks per second", ReportTable.Number(s.Blocks / seconds, "N0"))
            .Row("MB/s", ReportTable.Number(s.Bytes / 1e6 / seconds, "N1"));
        if (r.Duplicati is { } duplicati)
        {
            table.Row("Duplicati blocklist blocks (new Block rows)", ReportTable.Count(s.NewBlocklistBlocks))
                .Row("Duplicati operation", duplicati.OperationInserted ? $"{duplicati.OperationId} ('Backup', inserted by the sample: the file had none)" : $"{duplicati.OperationId} (the file's latest)")
                .Row("Duplicati File/FilesetEntry rows", "none written: a block indexer, not a backup (the blocksets belong to no fileset)");
        }

        if (r.RecordPath is not null)
        {
            table.Row("record", r.RecordPath);
        }

        table.Write();
    }

    private static string VolumesWritten(VolumeWriter volumes)
    {
        var uploaded = volumes.Uploaded;
        var text = uploaded.Count switch
        {
            0 => "0",
            1 => $"1 {volumes.ClosedState} ({uploaded[0]})",
            _ => $"{ReportTable.Count(uploaded.Count)} {volumes.ClosedState} ({uploaded[0]} … {uploaded[^1]})",
        };
        return volumes.Open is { } open
            ? $"{text}; {open.Name} left Temporary ({ByteSize.Format(open.Bytes)} of new blocks)"
            : text;
    }

    private static string DedupRatio(IndexStats s)
    {
        if (s.NewBlocks == 0 || s.NewBytes == 0)
        {
            return s.Blocks == 0 ? "-" : "all blocks were already in the index";
        }

        var byBlocks = (double)s.Blocks / s.NewBlocks;
        var byBytes = (double)s.Bytes / s.NewBytes;
        var saved = 1 - ((double)s.NewBytes / s.Bytes);
        return $"{ReportTable.Number(byBlocks, "0.000")} : 1 by blocks, {ReportTable.Number(byBytes, "0.000")} : 1 by bytes ({ReportTable.Number(saved, "P1")} of bytes deduplicated)";
    }
}
