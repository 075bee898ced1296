using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using BlockDb.Duplicati.Fixture;

namespace BlockDb.Stress;

/// <summary>
/// <c>fill</c> and <c>ops</c>: a fixed number of hot-path calls on a KeyMap file (or another layout's, when given), for instruction counts per call
/// under <c>valgrind --tool=callgrind</c> (bench/callgrind-ops.sh runs two counts and divides the difference, so
/// start-up, the map's load and the keys' set-up cancel out). Nothing here is timed for a result.
/// </summary>
internal static class OpCount
{
    /// <summary>How many keys <c>ops</c> computes before its loop, whatever the count (so both runs do the same set-up).</summary>
    private const int Pool = 200_000;

    /// <summary>Fills <paramref name="path"/> with blocks 0 … <paramref name="blocks"/> − 1 (KeyMap unless <paramref name="layout"/> says otherwise; the map's snapshot is written at dispose).</summary>
    public static async Task<int> FillAsync(string provider, string path, int blocks, BlockLayout layout = BlockLayout.KeyMap)
    {
        if (layout == BlockLayout.Duplicati)
        {
            return FillDuplicati(path, blocks);
        }

        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = layout }, Batching = { CommitEvery = 100_000 } });
        await using var session = await db.OpenSessionAsync();
        for (var i = 0; i < blocks; i++)
        {
            await session.SelectXorInsertAsync(BlockKey.Parse(Hash(i), 4096));
        }

        await session.CommitAsync();
        await session.FindBlockAsync(BlockKey.Parse(Hash(0), 4096)); // the map is loaded, so the dispose writes its snapshot
        Console.WriteLine($"filled {path} with {blocks:N0} blocks ({provider})");
        return 0;
    }

    /// <summary>
    /// A rebuild: <see cref="IBlockDatabase.ImportBlocksAsync"/> of blocks 0 … <paramref name="blocks"/> − 1 (32-byte
    /// hashes made as the input streams by <see cref="RowHash"/>, size 4,096, no volume) into <paramref name="path"/>, a new or
    /// empty KeyMap file, in transactions of <paramref name="perTransaction"/>; BlockDb's default options. 0 blocks only
    /// creates the file (the C limit, bench/native/import_loop.c, inserts the same rows into such a file). Prints the
    /// import call's own time; for a whole-process time run it under farm-bench, for instructions under callgrind.
    /// </summary>
    public static async Task<int> ImportAsync(string provider, string path, int blocks, int perTransaction)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
        var clock = Stopwatch.StartNew();
        var result = await db.ImportBlocksAsync(Rows(blocks), new ImportOptions { ItemsPerTransaction = perTransaction });
        var seconds = clock.Elapsed.TotalSeconds;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"rows {result.Created} seconds {seconds:F3} rows_per_second {result.Created / seconds:F0} transactions {result.Transactions}"));
        return result.Created == blocks ? 0 : 1;

        static async IAsyncEnumerable<ImportBlock> Rows(int count)
        {
            var hash = new byte[32];
            for (var i = 0; i < count; i++)
            {
                RowHash(i, hash);
                yield return new ImportBlock(new BlockKey(new BlockHash(hash), 4096));
            }

            await Task.CompletedTask;
        }
    }

    /// <summary>
    /// Row <paramref name="i"/>'s 32-byte hash: four splitmix64 words of the row number, little-endian, exactly as
    /// bench/native/import_loop.c makes them (as random as SHA-256 for the index; a few ns, where SHA-256 through .NET's
    /// OpenSSL binding costs about as much as the insert and would hide what the import itself costs).
    /// </summary>
    public static void RowHash(long i, Span<byte> hash)
    {
        for (var j = 0; j < 4; j++)
        {
            var z = unchecked((ulong)((4 * i) + j + 1) * 0x9E3779B97F4A7C15UL);
            z = unchecked((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL);
            z = unchecked((z ^ (z >> 27)) * 0x94D049BB133111EBUL);
            System.Buffers.Binary.BinaryPrimitives.WriteUInt64LittleEndian(hash[(j * 8)..], z ^ (z >> 31));
        }
    }

    /// <summary>
    /// Opens <paramref name="path"/> (filled with <paramref name="blocks"/> blocks) with default options, loads the map,
    /// then runs <paramref name="count"/> calls of <paramref name="operation"/>: <c>find</c> (FindBlockAsync of existing
    /// blocks), <c>sxi</c> (SelectXorInsertAsync, every other block new), <c>find-text</c> and <c>sxi-text</c> (the same two
    /// with the key parsed from its base64 text in each call), <c>sxi-hit</c> (SelectXorInsertAsync of existing
    /// blocks); <c>shared-sxi</c> and <c>shared-sxi-hit</c> the same on a shared session (one caller: a hit is a read
    /// on a pooled reader, a miss a queued write committed by the group-commit writer). Commits and exits without
    /// disposing, so no snapshot is written (its size would depend on the count).
    /// </summary>
    public static async Task<int> RunAsync(string provider, string path, int blocks, string operation, int count, BlockLayout layout = BlockLayout.KeyMap)
    {
        if (count > Pool)
        {
            throw new ArgumentOutOfRangeException(nameof(count), count, $"At most {Pool:N0} calls.");
        }

        // The keys are parsed from Duplicati's text here, once each, as a caller that keeps its keys does; the -text
        // operations keep the text and parse it in the loop, as a caller holding Duplicati's base64 strings does.
        var texts = new string[Pool];
        var keys = new BlockKey[Pool];
        for (var i = 0; i < Pool; i++)
        {
            var existing = (int)((long)i * 7919 % blocks);
            texts[i] = operation is "sxi" or "sxi-text" or "shared-sxi" && i % 2 == 1 ? Hash(blocks + i) : Hash(existing);
            keys[i] = BlockKey.Parse(texts[i], 4096);
        }

        // The read transaction is held up to a minute, not ended by its 50 ms clock: under valgrind the clock decided how
        // many read transactions a run paid, and counts of one build differed by 10 %; held, they repeat to 0.01 %.
        // The Duplicati layout records every new block in a volume: the filled file's volume 1.
        long? volume = layout == BlockLayout.Duplicati ? 1 : null;
        var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = layout }, Batching = { ReadTransactionMilliseconds = 60_000 } });
        var session = await db.OpenSessionAsync();
        await session.FindBlockAsync(BlockKey.Parse(Hash(0), 4096)); // loads the map
        var clock = Stopwatch.StartNew();
        var allocated = GC.GetAllocatedBytesForCurrentThread();
        long sum = 0;
        switch (operation)
        {
            case "find":
                for (var i = 0; i < count; i++)
                {
                    sum += await session.FindBlockAsync(keys[i]) ?? throw new InvalidOperationException($"Block {i} was not found.");
                }

                break;
            case "find-text":
                for (var i = 0; i < count; i++)
                {
                    sum += await session.FindBlockAsync(BlockKey.Parse(texts[i], 4096)) ?? throw new InvalidOperationException($"Block {i} was not found.");
                }

                break;
            case "sxi-text":
                for (var i = 0; i < count; i++)
                {
                    var result = await session.SelectXorInsertAsync(BlockKey.Parse(texts[i], 4096));
                    sum += result.Id + (result.Created ? 1 : 0);
                }

                break;
            case "sxi":
            case "sxi-hit":
                for (var i = 0; i < count; i++)
                {
                    var result = await session.SelectXorInsertAsync(keys[i], volume);
                    sum += result.Id + (result.Created ? 1 : 0);
                }

                break;
            case "shared-sxi":
            case "shared-sxi-hit":
                var shared = db.OpenSharedSession();
                for (var i = 0; i < count; i++)
                {
                    var result = await shared.SelectXorInsertAsync(keys[i]);
                    sum += result.Id + (result.Created ? 1 : 0);
                }

                GC.KeepAlive(shared);
                break;
            default:
                throw new ArgumentException($"Unknown operation '{operation}'; use find, find-text, sxi, sxi-text, sxi-hit, shared-sxi or shared-sxi-hit.", nameof(operation));
        }

        // The calls complete synchronously on SQLite, so the loop stays on this thread and its allocations are counted here.
        allocated = GC.GetAllocatedBytesForCurrentThread() - allocated;
        if (operation is not ("find" or "find-text"))
        {
            await session.CommitAsync();
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{provider} {operation} x {count:N0} on {blocks:N0} blocks: {clock.Elapsed.TotalMicroseconds / Math.Max(count, 1):F2} us/call (not a result), {(double)allocated / Math.Max(count, 1):F1} B allocated/call, checksum {sum}"));
        Console.Out.Flush();
        GC.KeepAlive(db);
        Environment.Exit(0);
        return 0;
    }

    /// <summary>
    /// A Duplicati file (the fixture's v19 DDL, SHA-256, 1 MiB blocks) holding blocks 0 … <paramref name="blocks"/> − 1 of
    /// 4,096 bytes in volume 1 (a Blocks volume, Temporary), inserted by Duplicati's own statement in one transaction.
    /// </summary>
    private static int FillDuplicati(string path, int blocks)
    {
        DuplicatiSchema.CreateFile(path, configuration: new DuplicatiConfiguration());
        using var connection = DuplicatiConnection.Open(path);
        using var transaction = connection.BeginTransaction();
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = """
            INSERT INTO "Operation" ("Description", "Timestamp") VALUES ('Backup', 0);
            INSERT INTO "Remotevolume" ("OperationID", "Name", "Type", "State", "Size", "VerificationCount", "DeleteGraceTime", "ArchiveTime", "LockExpirationTime") VALUES (1, 'duplicati-b0.dblock.zip', 'Blocks', 'Temporary', -1, 0, 0, 0, 0);
            """;
        command.ExecuteNonQuery();
        command.CommandText = """INSERT INTO "Block" ("Hash", "VolumeID", "Size") VALUES (@Hash, 1, 4096)""";
        var hash = command.Parameters.Add("@Hash", Microsoft.Data.Sqlite.SqliteType.Text);
        for (var i = 0; i < blocks; i++)
        {
            hash.Value = Hash(i);
            command.ExecuteNonQuery();
        }

        transaction.Commit();
        Console.WriteLine($"filled {path} with {blocks:N0} Duplicati blocks");
        return 0;
    }

    private static string Hash(int i) => Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(i)));
}
