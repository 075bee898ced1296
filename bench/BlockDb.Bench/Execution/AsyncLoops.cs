using BlockDb.Bench.Data;
using BlockDb.Bench.Model;

namespace BlockDb.Bench.Execution;

/// <summary>
/// The headline path: each workload as a user writes it, <c>await</c>ing the public repository API. Units
/// [from, to) of the stream run between the recorder's start and stop; the final <c>CommitAsync</c> is inside.
/// </summary>
internal static class AsyncLoops
{
    public static ValueTask<Tally> Run(Workload workload, IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r) => workload switch
    {
        Workload.Select => Select(s, d, from, to, r),
        Workload.Insert => Insert(s, d, from, to, r),
        Workload.XorSelectInsert or Workload.XorIgnoreSelect or Workload.XorReturning or Workload.XorHit => Xor(s, d, from, to, r),
        Workload.Join => Join(s, d, from, to, r),
        Workload.NewBlockset => Blocksets(s, d, from, to, r, opPerBlock: false),
        Workload.Replay => Blocksets(s, d, from, to, r, opPerBlock: true),
        _ => throw new ArgumentOutOfRangeException(nameof(workload), workload, null),
    };

    private static async ValueTask<Tally> Select(IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r)
    {
        var hashes = d.Hashes;
        var sizes = d.Sizes;
        var digest = new Fnv64();
        r.Start();
        for (var i = from; i < to; i++)
        {
            var id = await s.FindBlockAsync(BlockKey.Parse(hashes[i], sizes[i]));
            digest.Add(id ?? -1);
            r.Tick();
        }

        await s.CommitAsync();
        r.Stop();
        return new Tally(to - from, 0, 0, digest.Value);
    }

    private static async ValueTask<Tally> Insert(IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r)
    {
        var hashes = d.Hashes;
        var sizes = d.Sizes;
        var digest = new Fnv64();
        r.Start();
        for (var i = from; i < to; i++)
        {
            digest.Add((await s.SelectXorInsertAsync(BlockKey.Parse(hashes[i], sizes[i]))).Id);
            r.Tick();
        }

        await s.CommitAsync();
        r.Stop();
        return new Tally(to - from, 0, to - from, digest.Value);
    }

    private static async ValueTask<Tally> Xor(IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r)
    {
        var hashes = d.Hashes;
        var sizes = d.Sizes;
        var digest = new Fnv64();
        long created = 0;
        r.Start();
        for (var i = from; i < to; i++)
        {
            var result = await s.SelectXorInsertAsync(BlockKey.Parse(hashes[i], sizes[i]));
            digest.Add(result.Id);
            digest.Add(result.Created ? 1 : 0);
            created += result.Created ? 1 : 0;
            r.Tick();
        }

        await s.CommitAsync();
        r.Stop();
        return new Tally(to - from, 0, created, digest.Value);
    }

    private static async ValueTask<Tally> Join(IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r)
    {
        var ids = d.BlocksetIds!;
        var digest = new Fnv64();
        long rows = 0;
        var page = new BlocksetBlock[1024];
        r.Start();
        for (var i = from; i < to; i++)
        {
            // Into one reused buffer, page by page until a page comes back short.
            for (var next = 0; ;)
            {
                var count = await s.ListBlocksetBlocksAsync(ids[i], next, page);
                for (var j = 0; j < count; j++)
                {
                    var b = page[j];
                    digest.Add(b.Index);
                    digest.Add(b.BlockId);
                    digest.Add(b.Block.Size);
                }

                rows += count;
                if (count < page.Length)
                {
                    break;
                }

                next = page[count - 1].Index + 1;
            }

            r.Tick();
        }

        await s.CommitAsync();
        r.Stop();
        return new Tally(to - from, rows, 0, digest.Value);
    }

    /// <summary>New blockset (op = blockset, units = blocks) and replay (op = block, units = files).</summary>
    private static async ValueTask<Tally> Blocksets(IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r, bool opPerBlock)
    {
        var hashes = d.Hashes;
        var sizes = d.Sizes;
        var starts = d.GroupStarts!;
        var fullHashes = d.GroupFullHashes!;
        var keys = new List<BlockKey>(64);
        var digest = new Fnv64();
        long created = 0;
        long ops = 0;
        long units = 0;
        r.Start();
        for (var g = from; g < to; g++)
        {
            keys.Clear();
            var end = starts[g + 1];
            for (var i = starts[g]; i < end; i++)
            {
                var key = BlockKey.Parse(hashes[i], sizes[i]);
                var result = await s.SelectXorInsertAsync(key);
                digest.Add(result.Id);
                digest.Add(result.Created ? 1 : 0);
                created += result.Created ? 1 : 0;
                keys.Add(key);
                if (opPerBlock && i + 1 < end)
                {
                    ops++;
                    r.Tick();
                }
            }

            digest.Add(await s.AddBlocksetAsync(keys.ToArray(), new SelectXorInsertResult[keys.Count], fullHashes[g] is { } full ? BlockHash.Parse(full) : default));
            units += opPerBlock ? 1 : keys.Count;
            ops++;
            r.Tick();
        }

        await s.CommitAsync();
        r.Stop();
        return new Tally(ops, units, created, digest.Value);
    }
}
