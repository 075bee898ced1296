using System.Globalization;
using System.Text;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Layouts.Duplicati;

/// <summary>
/// Duplicati's consistency rules on a Duplicati file, inside the check's read snapshot: every check of its
/// <c>LocalDatabase.VerifyConsistency</c> (docs/DUPLICATI-FACTS.md §8), each run on its own (Duplicati stops at the first)
/// with Duplicati's message, then the invariants its code relies on without checking (§10), the blocklist hashes
/// recomputed through <see cref="DuplicatiBlocklists"/>. Rule names are the test fixture's oracle's. Times in messages
/// are UTC (<c>yyyy-MM-dd HH:mm:ss'Z'</c>), where Duplicati prints local time.
/// </summary>
internal static partial class DuplicatiRules
{
    /// <summary>Detail lines per message.</summary>
    private const int MaxDetails = 5;

    /// <summary>Runs every rule; returns the broken ones in the order above.</summary>
    /// <param name="connection">A connection in the check's read transaction.</param>
    /// <param name="file">The file's block size and hashes, read at open.</param>
    /// <param name="cancellationToken">Checked between rules and between blocksets.</param>
    public static IReadOnlyList<BlockDbRuleFinding> Check(ISqliteConnection connection, DuplicatiFile file, CancellationToken cancellationToken)
    {
        var findings = new List<BlockDbRuleFinding>();
        Lengths(connection, findings);
        BlocklistRows(connection, findings);
        Ids(connection, findings, BlockDbSql.DuplicatiRuleBlocklistHashCount, "BlocklistHashCount", n => $"Found {n} file(s) with missing blocklist hashes", s => s.BindInt64(1, file.HashesPerBlocklist));
        Ids(connection, findings, BlockDbSql.DuplicatiRuleBlocksetWithoutEntries, "BlocksetWithoutEntries", _ => "Detected non-empty blocksets with no associated blocks!");
        Ids(connection, findings, BlockDbSql.DuplicatiRuleFileWithoutBlockset, "FileWithoutBlockset", _ => "Detected files associated with non-existing blocksets!");
        cancellationToken.ThrowIfCancellationRequested();
        Filesets(connection, findings);
        cancellationToken.ThrowIfCancellationRequested();

        var (larger, largerRows) = Scan(connection, BlockDbSql.DuplicatiRuleBlockLargerThanBlocksize, s => s.BindInt64(1, file.Blocksize), s => (Id: s.ColumnInt64(0), Size: s.ColumnInt64(1)));
        Add(findings, "BlockLargerThanBlocksize", larger, largerRows.Select(r => r.Id), $"{larger} block(s) larger than the block size {file.Blocksize}: {Details(largerRows.Select(r => $"Block {r.Id} of {r.Size} bytes"), larger)}");
        Ids(connection, findings, BlockDbSql.DuplicatiRuleEntryPosition, "EntryPosition", n => $"{n} blockset(s) whose entries are not numbered 0..n-1, not ceil(Length / {file.Blocksize}) of them, or hold a block of another size than their position gives (every block {file.Blocksize} bytes but the last)", s => s.BindInt64(1, file.Blocksize));
        cancellationToken.ThrowIfCancellationRequested();
        Blocklists(connection, file, findings, cancellationToken);
        Ids(connection, findings, BlockDbSql.DuplicatiRuleBlocklistHashStray, "BlocklistHashStray", n => $"{n} blockset(s) of 0 or 1 entries (or none) hold BlocklistHash rows; Duplicati writes blocklists only for files of more than one block");
        Ids(connection, findings, BlockDbSql.DuplicatiRuleFullHash, "FullHash", n => $"{n} blockset(s) without a FullHash, or sharing (FullHash, Length) with another");
        Ids(connection, findings, BlockDbSql.DuplicatiRuleVolumeTypeOrState, "VolumeTypeOrState", n => $"{n} volume(s) whose Type or State is not one of Duplicati's names (Blocks, Files, Index; Temporary, Uploading, Uploaded, Verified, Deleting, Deleted)");
        Ids(connection, findings, BlockDbSql.DuplicatiRuleBlockVolume, "BlockVolume", n => $"{n} block(s) whose VolumeID is no Blocks volume that is not Deleted");
        var (metadata, metadataRows) = Scan(connection, BlockDbSql.DuplicatiRuleMetadata, null, s => (Id: s.ColumnInt64(0), Table: s.ColumnText(1), Names: s.ColumnInt64(2)));
        Add(findings, "Metadata", metadata, metadataRows.Select(r => r.Id), $"{metadata} metadata row(s) naming nothing: {Details(metadataRows.Select(r => r.Table == "FileLookup" ? $"FileLookup {r.Id} names Metadataset {r.Names}" : $"Metadataset {r.Id} names Blockset {r.Names}"), metadata)}");
        return findings;
    }

    /// <summary>§8.1, with Duplicati's message: up to 5 files, then "... and N more".</summary>
    private static void Lengths(ISqliteConnection connection, List<BlockDbRuleFinding> findings)
    {
        var (count, rows) = Scan(connection, BlockDbSql.DuplicatiRuleLengths, null, s => (Id: s.ColumnInt64(0), Path: s.ColumnText(1), Length: s.ColumnInt64(2), Sum: s.ColumnInt64(3)), MaxDetails);
        if (count == 0)
        {
            return;
        }

        var text = new StringBuilder("Found inconsistency in the following files while validating database: \n");
        foreach (var (id, path, length, sum) in rows)
        {
            text.Append(CultureInfo.InvariantCulture, $"{path}, actual size {length}, dbsize {sum}, blocksetid: {id}\n");
        }

        if (count > MaxDetails)
        {
            text.Append(CultureInfo.InvariantCulture, $"... and {count - MaxDetails} more");
        }

        Add(findings, "Lengths", count, rows.Select(r => r.Id), text.Append(". Run repair to fix it.").ToString());
    }

    /// <summary>§8.2: more BlocklistHash rows than distinct (BlocksetID, Index).</summary>
    private static void BlocklistRows(ISqliteConnection connection, List<BlockDbRuleFinding> findings)
    {
        long all, distinct;
        using (var rows = connection.Prepare(BlockDbSql.DuplicatiRuleBlocklistRows))
        {
            rows.Step();
            (all, distinct) = (rows.ColumnInt64(0), rows.ColumnInt64(1));
            rows.Reset();
        }

        if (all != distinct)
        {
            var (_, ids) = Scan(connection, BlockDbSql.DuplicatiRuleDuplicateBlocklistHashes, null, s => s.ColumnInt64(0));
            Add(findings, "DuplicateBlocklistHashes", all - distinct, ids, $"Found {all} blocklist hashes, but there should be {distinct}. Run repair to fix it.");
        }
    }

    /// <summary>§8.6-8.8: filesets and their volumes, orphan entries, and the file lists.</summary>
    private static void Filesets(ISqliteConnection connection, List<BlockDbRuleFinding> findings)
    {
        var (lost, lostRows) = Scan(connection, BlockDbSql.DuplicatiRuleFilesetWithoutVolume, null, s => (Id: s.ColumnInt64(0), Time: s.ColumnInt64(1), Volume: s.ColumnInt64(2)));
        if (lost > 0)
        {
            Add(findings, "FilesetWithoutVolume", lost, lostRows.Select(r => r.Id), lost == 1
                ? $"Detected 1 fileset with missing volume: FilesetId = {lostRows[0].Id}, Time = ({Time(lostRows[0].Time)}), unmatched VolumeID {lostRows[0].Volume}"
                : $"Detected {lost} filesets with missing volumes");
        }

        var (unused, unusedRows) = Scan(connection, BlockDbSql.DuplicatiRuleFilesVolumeWithoutFileset, null, s => (Id: s.ColumnInt64(0), Name: s.ColumnText(1), State: s.ColumnText(2)));
        if (unused > 0)
        {
            Add(findings, "FilesVolumeWithoutFileset", unused, unusedRows.Select(r => r.Id), unused == 1
                ? $"Detected 1 volume with missing filesets: VolumeId = {unusedRows[0].Id}, Name = {unusedRows[0].Name}, State = {unusedRows[0].State}"
                : $"Detected {unused} volumes with missing filesets");
        }

        var (orphans, _) = Scan(connection, BlockDbSql.DuplicatiRuleOrphanEntries, null, s => s.ColumnInt64(0), 0);
        if (orphans > 0)
        {
            var (_, filesets) = Scan(connection, BlockDbSql.DuplicatiRuleFilesets, null, s => (Id: s.ColumnInt64(0), Time: s.ColumnInt64(1), Orphans: s.ColumnInt64(2)), int.MaxValue);
            var named = filesets.Select((f, version) => (f.Id, f.Time, f.Orphans, Version: version)).Where(f => f.Orphans > 0).ToList();
            var lines = named.Take(10).Select(f => $"Fileset {f.Version}: {Time(f.Time)} (id = {f.Id})").ToList();
            if (named.Count > 10)
            {
                lines.Add("... and more");
            }

            var message = $"Detected {orphans} file(s) in FilesetEntry without corresponding FileLookup entry";
            Add(findings, "FilesetEntryWithoutFile", orphans, named.Select(f => f.Id).Order(), lines.Count == 0 ? message : $"{message} in the following filesets:\n{string.Join("\n", lines)}");
        }

        var (differ, differRows) = Scan(connection, BlockDbSql.DuplicatiRuleFilesetDifferences, null, s => (Id: s.ColumnInt64(0), Time: s.ColumnInt64(1), Listed: s.ColumnInt64(2), Stored: s.ColumnInt64(3), Version: s.ColumnInt64(4)), int.MaxValue);
        if (differ > 0)
        {
            Add(findings, "FilesetDifferences", differ, differRows.Select(r => r.Id).Order(), string.Join("\n\r", differRows.Select(r =>
                $"Unexpected difference in fileset version {r.Version}: {Time(r.Time)} (database id: {r.Id}), found {r.Listed} entries, but expected {r.Stored}")));
        }
    }

    /// <summary>A rule whose query gives only IDs.</summary>
    private static void Ids(ISqliteConnection connection, List<BlockDbRuleFinding> findings, SqlStatement query, string rule, Func<long, string> message, Action<ISqliteStatement>? bind = null)
    {
        var (count, ids) = Scan(connection, query, bind, s => s.ColumnInt64(0));
        Add(findings, rule, count, ids, count == 0 ? string.Empty : message(count));
    }

    private static void Add(List<BlockDbRuleFinding> findings, string rule, long count, IEnumerable<long> ids, string message)
    {
        if (count > 0)
        {
            findings.Add(new BlockDbRuleFinding(rule, count, [.. ids.Take(BlockDbCheckResult.MaxListed)], message));
        }
    }

    /// <summary>Runs a query: how many rows, and the first <paramref name="keep"/> read.</summary>
    private static (long Count, List<T> First) Scan<T>(ISqliteConnection connection, SqlStatement query, Action<ISqliteStatement>? bind, Func<ISqliteStatement, T> read, int keep = BlockDbCheckResult.MaxListed)
    {
        using var statement = connection.Prepare(query);
        bind?.Invoke(statement);
        var first = new List<T>();
        long count = 0;
        while (statement.Step())
        {
            if (count++ < keep)
            {
                first.Add(read(statement));
            }
        }

        statement.Reset();
        return (count, first);
    }

    private static string Details(IEnumerable<string> lines, long count)
    {
        var shown = string.Join("; ", lines.Take(MaxDetails));
        return count > MaxDetails ? $"{shown}; ... and {count - MaxDetails} more" : shown;
    }

    private static string Time(long epochSeconds) =>
        DateTime.UnixEpoch.AddSeconds(epochSeconds).ToString("yyyy-MM-dd HH:mm:ss'Z'", CultureInfo.InvariantCulture);
}
