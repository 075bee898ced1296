using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;

namespace BlockDb.Stress;

/// <summary>
/// <c>ops … file-sxi|file-one</c>: a fixed number of files of 16 blocks (12 existing, 4 new in every file) on a filled
/// file, for instructions per file under callgrind (bench/callgrind-ops.sh): <c>file-sxi</c> is the per-block path
/// (16 × <c>SelectXorInsertAsync</c> of the key parsed from its base64 text, as an engine holding Duplicati's strings
/// does, then <c>AddBlocksetAsync</c> of the same keys), <c>file-one</c> the file in one call (<c>AddBlocksetAsync</c>).
/// One write transaction for the run (CommitEvery 0, committed at the end), as in the micro benchmark: a run under
/// valgrind on a loaded machine outlasts the read transaction's clock, whose expiry made the counts differ run to run.
/// Nothing here is timed for a result.
/// </summary>
internal static class FileOps
{
    private const int Blocks = 16;

    /// <summary>Files computed before the loop whatever the count, so both runs of a pair do the same set-up.</summary>
    private const int Pool = 4_000;

    public static async Task<int> RunAsync(string provider, string path, int blocks, string operation, int count, BlockLayout layout)
    {
        if (count > Pool)
        {
            throw new ArgumentOutOfRangeException(nameof(count), count, $"At most {Pool:N0} files.");
        }

        if (operation is not ("file-sxi" or "file-one"))
        {
            throw new ArgumentException($"Unknown file operation '{operation}'; use file-sxi or file-one.", nameof(operation));
        }

        var texts = new string[Pool * Blocks];
        var keys = new BlockKey[Pool * Blocks];
        for (var i = 0; i < texts.Length; i++)
        {
            var existing = (int)((long)i * 7919 % blocks);
            texts[i] = Hash(i % 4 == 3 ? blocks + i : existing);
            keys[i] = BlockKey.Parse(texts[i], 4096);
        }

        long? volume = layout == BlockLayout.Duplicati ? 1 : null;
        var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = layout }, Batching = { CommitEvery = 0, ReadTransactionMilliseconds = 60_000 } });
        var session = await db.OpenSessionAsync();
        await session.FindBlockAsync(BlockKey.Parse(Hash(0), 4096)); // loads the map
        var fileKeys = new BlockKey[Blocks];
        var results = new SelectXorInsertResult[Blocks];
        var clock = Stopwatch.StartNew();
        var allocated = GC.GetAllocatedBytesForCurrentThread();
        long sum = 0;
        for (var f = 0; f < count; f++)
        {
            var first = f * Blocks;
            if (operation == "file-sxi")
            {
                for (var j = 0; j < Blocks; j++)
                {
                    fileKeys[j] = BlockKey.Parse(texts[first + j], 4096);
                    results[j] = await session.SelectXorInsertAsync(fileKeys[j], volume);
                }

                sum += await session.AddBlocksetAsync(fileKeys, results, volumeId: volume);
            }
            else
            {
                sum += await session.AddBlocksetAsync(keys.AsMemory(first, Blocks), results, volumeId: volume);
            }
        }

        allocated = GC.GetAllocatedBytesForCurrentThread() - allocated;
        await session.CommitAsync();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{provider} {operation} x {count:N0} files of {Blocks} on {blocks:N0} blocks: {clock.Elapsed.TotalMicroseconds / Math.Max(count, 1):F2} us/file (not a result), {(double)allocated / Math.Max(count, 1):F1} B allocated/file, checksum {sum}"));
        Console.Out.Flush();
        GC.KeepAlive(db);
        Environment.Exit(0);
        return 0;
    }

    private static string Hash(int i) => Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(i)));
}
