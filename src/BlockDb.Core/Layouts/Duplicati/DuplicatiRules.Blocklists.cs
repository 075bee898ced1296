using System.Security.Cryptography;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Layouts.Duplicati;

// The blocklist rules (facts §5, §10): every multi-block blockset's blocklist hashes recomputed from its entries.
internal static partial class DuplicatiRules
{
    /// <summary>
    /// §5: each blockset of more than one entry, streamed in (BlocksetID, Index) order: its blocklists rebuilt from its
    /// entries' hashes (<see cref="DuplicatiBlocklists"/>, one blocklist's keys in memory at a time) and hashed,
    /// against its BlocklistHash rows (BlocklistHashValue); each matching blocklist must be a Block of its hash and size
    /// (BlocklistBlockMissing). A blockset naming a missing block is left to the other rules.
    /// </summary>
    private static void Blocklists(ISqliteConnection connection, DuplicatiFile file, List<BlockDbRuleFinding> findings, CancellationToken cancellationToken)
    {
        var hashSize = file.BlockHashSize;
        var perList = file.HashesPerBlocklist;
        var keys = new List<TextBlockKey>(Math.Min(perList, 4096));
        var bytes = new byte[perList * hashSize];
        var digest = new byte[hashSize];
        var decoded = new byte[BlockHash.MaxBytes];
        var computed = new List<(string Hash, int Size)>();
        var badValues = new List<(long Id, string Detail)>();
        var missing = new List<(long Id, string Detail)>();
        using var stored = connection.Prepare(BlockDbSql.DuplicatiRuleStoredBlocklists);
        using var exists = connection.Prepare(BlockDbSql.DuplicatiRuleBlockExists);
        using var entries = connection.Prepare(BlockDbSql.DuplicatiRuleBlocklistEntries);

        long current = 0;
        var started = false;
        var broken = false;

        void Close()
        {
            var n = keys.Count;
            if (n > 0)
            {
                var size = DuplicatiBlocklists.WriteHashes(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(keys), (long)computed.Count * perList, hashSize, bytes);
                CryptographicOperations.HashData(file.BlockHash, bytes.AsSpan(0, size), digest);
                computed.Add((Convert.ToBase64String(digest), size));
                keys.Clear();
            }
        }

        void Finish()
        {
            if (!started || broken)
            {
                return;
            }

            Close();
            var rows = new List<(long Index, string? Hash)>();
            stored.BindInt64(1, current);
            while (stored.Step())
            {
                rows.Add((stored.ColumnInt64(0), stored.ColumnText(1)));
            }

            stored.Reset();
            for (var k = 0; k < Math.Max(rows.Count, computed.Count); k++)
            {
                if (k < rows.Count && rows[k].Index != k)
                {
                    badValues.Add((current, $"blockset {current}: blocklist hash rows not numbered 0..{rows.Count - 1} (row {k} has Index {rows[k].Index})"));
                    break;
                }

                if (k >= rows.Count || k >= computed.Count || rows[k].Hash != computed[k].Hash)
                {
                    badValues.Add((current, $"blockset {current}: blocklist {k} is {(k < rows.Count ? rows[k].Hash : "missing")}, its entries hash to {(k < computed.Count ? computed[k].Hash : "nothing")}"));
                    continue;
                }

                exists.BindText(1, computed[k].Hash);
                exists.BindInt64(2, computed[k].Size);
                exists.Step();
                var found = exists.ColumnInt64(0) == 1;
                exists.Reset();
                if (!found)
                {
                    missing.Add((current, $"blockset {current}: blocklist {k} ({computed[k].Hash}, {computed[k].Size} bytes) is no Block"));
                }
            }
        }

        while (entries.Step())
        {
            var id = entries.ColumnInt64(0);
            if (!started || id != current)
            {
                Finish();
                cancellationToken.ThrowIfCancellationRequested();
                (current, started, broken) = (id, true, false);
                keys.Clear();
                computed.Clear();
            }

            if (broken)
            {
                continue;
            }

            var hash = entries.ColumnText(1);
            if (hash is null)
            {
                // A missing block: the entry rules report it; its blocklists cannot be rebuilt.
                broken = true;
                continue;
            }

            if (BlockHash.TryDecode(hash, decoded) != hashSize)
            {
                badValues.Add((id, $"blockset {id}: a block's hash {Quoted.Value(hash)} is not {hashSize} bytes of base64"));
                broken = true;
                continue;
            }

            if (keys.Count == perList)
            {
                Close();
            }

            keys.Add(new TextBlockKey(hash, 1));
        }

        entries.Reset();
        Finish();
        Add(findings, "BlocklistHashValue", badValues.Count, badValues.Select(v => v.Id).Distinct(), $"{badValues.Count} blocklist hashes that are not the hash of their entries: {Details(badValues.Select(v => v.Detail), badValues.Count)}");
        Add(findings, "BlocklistBlockMissing", missing.Count, missing.Select(v => v.Id).Distinct(), $"{missing.Count} blocklist blocks missing from Block: {Details(missing.Select(v => v.Detail), missing.Count)}");
    }
}
