using System.Diagnostics;
using BlockDb.Bench.Data;

namespace BlockDb.Bench.Server;

/// <summary>
/// The provider comparison on the server (issue 15), through the public API only, the same workloads for PostgreSQL and
/// for a SQLite provider: select-xor-insert of new blocks, finds of existing blocks, a file's blocks and blockset in one
/// call versus per-block round trips, bulk import by COPY, and the shared session under concurrent writers.
/// </summary>
internal static class ServerWorkloads
{
    public const int BlockSize = 102_400;

    /// <summary>Select-xor-insert of <paramref name="ops"/> new blocks on one session (CommitEvery 1000).</summary>
    public static Task<Percentiles> XorNewAsync(IBlockDatabase db, int seed, int ops) =>
        EachAsync(db, ops, async (session, i) => await session.SelectXorInsertAsync(BlockKey.Parse(BlockHashes.Of(seed, HashDomain.Stream, i), BlockSize)));

    /// <summary>Finds of blocks written by <see cref="XorNewAsync"/>, in a different order.</summary>
    public static Task<Percentiles> FindAsync(IBlockDatabase db, int seed, int ops) =>
        EachAsync(db, ops, async (session, i) =>
            _ = await session.FindBlockAsync(BlockKey.Parse(BlockHashes.Of(seed, HashDomain.Stream, (i * 7919L) % ops), BlockSize)) ?? throw new InvalidOperationException("a written block was not found"));

    /// <summary>Times <paramref name="ops"/> calls of <paramref name="call"/> on one session, then commits (inside the timed region).</summary>
    private static async Task<Percentiles> EachAsync(IBlockDatabase db, int ops, Func<IBlockSession, int, Task> call)
    {
        await using var session = await db.OpenSessionAsync();
        var latencies = new List<double>(ops);
        var clock = Stopwatch.StartNew();
        for (var i = 0; i < ops; i++)
        {
            var start = clock.Elapsed.TotalMicroseconds;
            await call(session, i);
            latencies.Add(clock.Elapsed.TotalMicroseconds - start);
        }

        await session.CommitAsync();
        return Percentiles.Of(ops, clock.Elapsed.TotalSeconds, latencies);
    }

    /// <summary>
    /// Files of <paramref name="blocks"/> known blocks each: in one call (<c>AddBlocksetAsync(keys)</c>, one round trip on
    /// the server) or Duplicati's way, a lookup per block and then the blockset by the same keys. Ops are files.
    /// </summary>
    public static async Task<Percentiles> BlocksetsAsync(IBlockDatabase db, int seed, int files, int blocks, int knownBlocks, bool oneCall)
    {
        await using var session = await db.OpenSessionAsync();
        var latencies = new List<double>(files);
        var keys = new BlockKey[blocks];
        var results = new SelectXorInsertResult[blocks];
        var clock = Stopwatch.StartNew();
        for (var f = 0; f < files; f++)
        {
            for (var b = 0; b < blocks; b++)
            {
                keys[b] = BlockKey.Parse(BlockHashes.Of(seed, HashDomain.Stream, ((f * 31L) + (b * 7L)) % knownBlocks), BlockSize);
            }

            var start = clock.Elapsed.TotalMicroseconds;
            if (oneCall)
            {
                await session.AddBlocksetAsync(keys, results, BlockHashes.Binary(seed, HashDomain.FullHash, f));
            }
            else
            {
                for (var b = 0; b < blocks; b++)
                {
                    _ = await session.FindBlockAsync(keys[b]) ?? throw new InvalidOperationException("a known block was not found");
                }

                await session.AddBlocksetAsync(keys, results, BlockHashes.Binary(seed, HashDomain.FullHash, f));
            }

            latencies.Add(clock.Elapsed.TotalMicroseconds - start);
        }

        await session.CommitAsync();
        return Percentiles.Of(files, clock.Elapsed.TotalSeconds, latencies);
    }

    /// <summary>Bulk import of <paramref name="blocks"/> new blocks by binary COPY (PostgreSQL only). Ops are blocks.</summary>
    public static async Task<Percentiles> ImportAsync(IBlockDatabase db, int seed, int blocks)
    {
        var keys = Enumerable.Range(0, blocks).Select(i => new ImportBlock(new BlockKey(BlockHash.Parse(BlockHashes.Of(seed, HashDomain.Prefill, i)), BlockSize))).ToList();
        var clock = Stopwatch.StartNew();
        var inserted = (await db.ImportBlocksAsync(keys.ToAsyncEnumerable(), new ImportOptions { ItemsPerTransaction = ImportOptions.MaxItemsPerTransaction })).Created;
        var seconds = clock.Elapsed.TotalSeconds;
        return inserted == blocks ? Percentiles.Of(blocks, seconds, []) : throw new InvalidOperationException($"imported {inserted} of {blocks}");
    }

    /// <summary><paramref name="tasks"/> concurrent tasks select-xor-inserting new blocks through one shared session. Ops are acknowledged writes.</summary>
    public static async Task<Percentiles> SharedAsync(IBlockDatabase db, int seed, int tasks, int opsPerTask) =>
        await ConcurrentAsync(tasks, opsPerTask, db.OpenSharedSession(), static (w, h, s) => w.SelectXorInsertAsync(BlockKey.Parse(h, s)), seed);

    /// <summary>The same with writes gathered by one session behind a queue, committed per batch: a group commit built from the public API.</summary>
    public static async Task<Percentiles> GroupCommitAsync(IBlockDatabase db, int seed, int tasks, int opsPerTask)
    {
        await using var session = await db.OpenSessionAsync();
        await using var writer = new QueuedWriter(session);
        return await ConcurrentAsync(tasks, opsPerTask, writer, static (w, h, s) => w.SelectXorInsertAsync(h, s), seed);
    }

    private static async Task<Percentiles> ConcurrentAsync<TWriter>(int tasks, int opsPerTask, TWriter writer, Func<TWriter, string, long, ValueTask<SelectXorInsertResult>> selectXorInsert, int seed)
    {
        var latencies = new List<double>[tasks];
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, tasks).Select(t => Task.Run(async () =>
        {
            var own = latencies[t] = new List<double>(opsPerTask);
            for (var i = 0; i < opsPerTask; i++)
            {
                var start = clock.Elapsed.TotalMicroseconds;
                await selectXorInsert(writer, BlockHashes.Of(seed, HashDomain.Warmup, ((long)t * opsPerTask) + i), BlockSize);
                own.Add(clock.Elapsed.TotalMicroseconds - start);
            }
        })));
        var seconds = clock.Elapsed.TotalSeconds;
        if (writer is IAsyncDisposable disposable and not QueuedWriter)
        {
            await disposable.DisposeAsync();
        }

        return Percentiles.Of((long)tasks * opsPerTask, seconds, [.. latencies.SelectMany(l => l)]);
    }
}
