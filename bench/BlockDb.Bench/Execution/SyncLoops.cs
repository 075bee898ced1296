using BlockDb.Bench.Data;
using BlockDb.Bench.Model;

namespace BlockDb.Bench.Execution;

/// <summary>
/// The same public API, without <c>await</c>: <c>.GetAwaiter().GetResult()</c> on each <c>ValueTask</c>
/// (safe because BlockDb's ValueTasks always complete synchronously) in a plain loop.
/// </summary>
internal static class SyncLoops
{
    public static Tally Run(Workload workload, IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r) => workload switch
    {
        Workload.Select => Select(s, d, from, to, r),
        Workload.Insert => Insert(s, d, from, to, r),
        Workload.XorSelectInsert or Workload.XorHit => Xor(s, d, from, to, r),
        _ => throw new NotSupportedException($"The sync path covers select, insert and xor-select-insert, not {WorkloadInfo.Name(workload)}."),
    };

    private static Tally Select(IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r)
    {
        var hashes = d.Hashes;
        var sizes = d.Sizes;
        var digest = new Fnv64();
        r.Start();
        for (var i = from; i < to; i++)
        {
            var id = s.FindBlockAsync(BlockKey.Parse(hashes[i], sizes[i])).GetAwaiter().GetResult();
            digest.Add(id ?? -1);
            r.Tick();
        }

        s.CommitAsync().GetAwaiter().GetResult();
        r.Stop();
        return new Tally(to - from, 0, 0, digest.Value);
    }

    private static Tally Insert(IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r)
    {
        var hashes = d.Hashes;
        var sizes = d.Sizes;
        var digest = new Fnv64();
        r.Start();
        for (var i = from; i < to; i++)
        {
            digest.Add(s.SelectXorInsertAsync(BlockKey.Parse(hashes[i], sizes[i])).GetAwaiter().GetResult().Id);
            r.Tick();
        }

        s.CommitAsync().GetAwaiter().GetResult();
        r.Stop();
        return new Tally(to - from, 0, to - from, digest.Value);
    }

    private static Tally Xor(IBlockSession s, BlockStream d, int from, int to, LatencyRecorder r)
    {
        var hashes = d.Hashes;
        var sizes = d.Sizes;
        var digest = new Fnv64();
        long created = 0;
        r.Start();
        for (var i = from; i < to; i++)
        {
            var result = s.SelectXorInsertAsync(BlockKey.Parse(hashes[i], sizes[i])).GetAwaiter().GetResult();
            digest.Add(result.Id);
            digest.Add(result.Created ? 1 : 0);
            created += result.Created ? 1 : 0;
            r.Tick();
        }

        s.CommitAsync().GetAwaiter().GetResult();
        r.Stop();
        return new Tally(to - from, 0, created, digest.Value);
    }
}
