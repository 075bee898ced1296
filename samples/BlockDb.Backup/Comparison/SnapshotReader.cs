using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using BlockDb.Backup.Sidecar;
using Microsoft.Extensions.Logging;

namespace BlockDb.Backup.Comparison;

/// <summary>
/// Reads a database through the public API only: the blocksets from <c>EnumerateBlocksetsAsync</c> (IDs need not be
/// 1..N: <c>delete</c> leaves gaps), each one's blocks from <c>ListBlocksetBlocksAsync</c>, the counts from
/// <c>GetCountsAsync</c>.
/// </summary>
internal static class SnapshotReader
{
    public static async Task<DatabaseSnapshot> ReadAsync(BlockDbOptions configured, string path, string dataFolder, ILoggerFactory loggerFactory, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        var options = new BlockDbOptions
        {
            Provider = configured.Provider,
            DataSource = path,
            Pragmas = configured.Pragmas,
            Batching = configured.Batching,
            SelectXorInsert = configured.SelectXorInsert,
        };
        await using var database = BlockDatabase.Open(options, loggerFactory);
        await using var repository = await database.OpenSessionAsync(cancellationToken).ConfigureAwait(false);
        var counts = await repository.GetCountsAsync(cancellationToken).ConfigureAwait(false);
        var blocks = new HashSet<BlockKey>();
        var byId = new Dictionary<long, string>();
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        await foreach (var info in database.EnumerateBlocksetsAsync(cancellationToken).ConfigureAwait(false))
        {
            var buffer = new BlocksetBlock[info.BlockCount];
            var list = new ArraySegment<BlocksetBlock>(buffer, 0, buffer.Length == 0 ? 0 : await repository.ListBlocksetBlocksAsync(info.Id, 0, buffer, cancellationToken).ConfigureAwait(false));
            byId[info.Id] = Digest(hash, info, list);
            foreach (var block in list)
            {
                blocks.Add(block.Block);
            }
        }

        var sidecarPath = FileMap.PathFor(database.DataSource, database.Layout == BlockLayout.Duplicati, dataFolder);
        var pathDigests = File.Exists(sidecarPath)
            ? FileMap.Read(sidecarPath).ToDictionary(e => e.Path, e => byId.GetValueOrDefault(e.BlocksetId, $"missing blockset {e.BlocksetId}"), StringComparer.Ordinal)
            : null;
        return new DatabaseSnapshot(
            database.DataSource,
            database.ProviderName,
            database.EngineVersion,
            counts,
            blocks.Count,
            SortedDigest(hash, blocks.Select(b => string.Create(CultureInfo.InvariantCulture, $"{b.Hash}\t{b.Size}"))),
            SortedDigest(hash, byId.Values),
            pathDigests,
            clock.Elapsed);
    }

    /// <summary>A blockset's identity: its length, full hash and ordered (hash, size) list.</summary>
    private static string Digest(IncrementalHash hash, BlocksetInfo info, IReadOnlyList<BlocksetBlock> blocks)
    {
        Append(hash, string.Create(CultureInfo.InvariantCulture, $"{info.Length}\t{info.FullHash}\n"));
        foreach (var block in blocks)
        {
            Append(hash, string.Create(CultureInfo.InvariantCulture, $"{block.Index}\t{block.Block.Hash}\t{block.Block.Size}\n"));
        }

        return Convert.ToBase64String(hash.GetHashAndReset());
    }

    private static string SortedDigest(IncrementalHash hash, IEnumerable<string> items)
    {
        foreach (var item in items.Order(StringComparer.Ordinal))
        {
            Append(hash, item + "\n");
        }

        return Convert.ToBase64String(hash.GetHashAndReset());
    }

    private static void Append(IncrementalHash hash, string text)
    {
        Span<byte> buffer = stackalloc byte[512];
        if (Encoding.UTF8.TryGetBytes(text, buffer, out var written))
        {
            hash.AppendData(buffer[..written]);
        }
        else
        {
            hash.AppendData(Encoding.UTF8.GetBytes(text));
        }
    }
}
