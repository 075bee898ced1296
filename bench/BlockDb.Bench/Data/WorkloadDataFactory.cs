using BlockDb.Bench.Model;

namespace BlockDb.Bench.Data;

/// <summary>
/// Makes the warm-up and timed input of a workload, deterministically from the seed, so every provider
/// (and the C baseline) sees identical data. Streams that write mix new blocks with a share of repeats
/// (<see cref="DuplicateShare"/>): half repeat a pre-filled block, half repeat an earlier new block of the
/// same thread slice (so concurrent sessions never race to insert the same new block).
/// </summary>
/// <param name="seed">The data seed.</param>
/// <param name="duplicateShare">The share of repeated blocks in write streams, 0 to 1.</param>
/// <param name="blocksetBlocks">k: blocks per new blockset.</param>
/// <param name="replay">The recorded stream for the replay workload, if any.</param>
public sealed class WorkloadDataFactory(int seed, double duplicateShare, int blocksetBlocks, ReplayStream? replay)
{
    private const long TimedGroupHashBase = 1L << 40;
    private const long WarmupGroupHashBase = 1L << 41;

    /// <summary>The share of repeated blocks.</summary>
    public double DuplicateShare => duplicateShare;

    /// <summary>k, blocks per new blockset.</summary>
    public int BlocksetBlocks => blocksetBlocks;

    /// <summary>The recorded stream, if any.</summary>
    public ReplayStream? Replay => replay;

    /// <summary>Makes the input of one configuration.</summary>
    /// <param name="workload">The workload.</param>
    /// <param name="plan">The pre-filled content.</param>
    /// <param name="ops">Timed ops.</param>
    /// <param name="warmup">Warm-up ops.</param>
    /// <param name="slices">Thread slices the repeats must respect.</param>
    /// <returns>The data.</returns>
    public WorkloadData Create(Workload workload, PrefillPlan plan, int ops, int warmup, int slices)
    {
        var family = workload switch
        {
            Workload.XorIgnoreSelect or Workload.XorReturning => Workload.XorSelectInsert, // identical streams for the three strategies
            _ => workload,
        };
        Random Rng(int phase) => new(unchecked((seed * 1_000_003) ^ ((int)family * 7919) ^ (plan.Blocks * 31) ^ (phase * 104_729)));

        return workload switch
        {
            Workload.Select or Workload.XorHit => new(Picks(plan, warmup, Rng(1)), Picks(plan, ops, Rng(2))),
            Workload.Insert or Workload.Import => new(Blocks(plan, warmup, 0, HashDomain.Warmup, Rng(1), 1), Blocks(plan, ops, 0, HashDomain.Stream, Rng(2), 1)),
            Workload.XorSelectInsert or Workload.XorIgnoreSelect or Workload.XorReturning =>
                new(Blocks(plan, warmup, duplicateShare, HashDomain.Warmup, Rng(1), slices), Blocks(plan, ops, duplicateShare, HashDomain.Stream, Rng(2), slices)),
            Workload.Join => new(Blocksets(plan, warmup, Rng(1)), Blocksets(plan, ops, Rng(2))),
            Workload.NewBlockset => new(Groups(plan, warmup, HashDomain.Warmup, Rng(1), slices), Groups(plan, ops, HashDomain.Stream, Rng(2), slices)),
            Workload.Replay => new(Groups(plan, Math.Max(1, warmup / blocksetBlocks), HashDomain.Warmup, Rng(1), slices), Recorded(ops)),
            _ => throw new ArgumentOutOfRangeException(nameof(workload), workload, null),
        };
    }

    private static BlockStream Picks(PrefillPlan plan, int count, Random rng)
    {
        var b = new StreamBuilder();
        for (var i = 0; i < count; i++)
        {
            var index = rng.Next(plan.Blocks);
            b.Add(plan.Hash(index), plan.Sizes[index], index);
        }

        return b.Build(grouped: false);
    }

    private static BlockStream Blocksets(PrefillPlan plan, int count, Random rng)
    {
        var ids = new long[count];
        for (var i = 0; i < count; i++)
        {
            ids[i] = rng.Next(plan.Blocksets) + 1;
        }

        return new BlockStream { Hashes = [], Sizes = [], PrefillIndex = [], BlocksetIds = ids };
    }

    /// <summary>A stream of single blocks with file-structured sizes; <paramref name="dupShare"/> of them repeats.</summary>
    private BlockStream Blocks(PrefillPlan plan, int count, double dupShare, HashDomain domain, Random rng, int slices)
    {
        var b = new StreamBuilder();
        var source = new NewBlockSource(seed, domain, rng);
        for (var slice = 0; slice < slices; slice++)
        {
            var (start, end) = BlockStream.SliceOf(count, slice, slices);
            var fresh = new List<int>();
            for (var i = start; i < end; i++)
            {
                AddBlock(b, plan, dupShare, rng, fresh, () => source.Next());
            }
        }

        return b.Build(grouped: false);
    }

    /// <summary>Blocksets of k blocks: k − 1 full blocks and a tail of 1 to 102,400 bytes, with repeats.</summary>
    private BlockStream Groups(PrefillPlan plan, int count, HashDomain domain, Random rng, int slices)
    {
        var b = new StreamBuilder();
        var counter = 0L;
        var groupBase = domain == HashDomain.Warmup ? WarmupGroupHashBase : TimedGroupHashBase;
        var group = 0L;
        for (var slice = 0; slice < slices; slice++)
        {
            var (start, end) = BlockStream.SliceOf(count, slice, slices);
            var fresh = new List<int>();
            for (var g = start; g < end; g++)
            {
                b.StartGroup(BlockHashes.Of(seed, HashDomain.FullHash, groupBase + group++));
                for (var j = 0; j < blocksetBlocks; j++)
                {
                    var size = j < blocksetBlocks - 1 ? FileSizeModel.BlockSize : rng.Next(1, FileSizeModel.BlockSize + 1);
                    AddBlock(b, plan, duplicateShare, rng, fresh, () => (BlockHashes.Of(seed, domain, counter++), size));
                }
            }
        }

        return b.Build(grouped: true);
    }

    private static void AddBlock(StreamBuilder b, PrefillPlan plan, double dupShare, Random rng, List<int> fresh, Func<(string Hash, long Size)> next)
    {
        // r < share/2: repeat a pre-filled block; share/2 <= r < share: repeat an earlier new block of this
        // slice (a pre-filled one while there is none yet); otherwise a new block.
        var r = rng.NextDouble();
        var repeatEarlier = r < dupShare && r >= dupShare / 2 && fresh.Count > 0;
        if (repeatEarlier)
        {
            var earlier = fresh[rng.Next(fresh.Count)];
            b.Add(b.HashAt(earlier), b.SizeAt(earlier), -1);
        }
        else if (r < dupShare)
        {
            var index = rng.Next(plan.Blocks);
            b.Add(plan.Hash(index), plan.Sizes[index], index);
        }
        else
        {
            var (hash, size) = next();
            fresh.Add(b.Count);
            b.Add(hash, size, -1);
        }
    }

    private BlockStream Recorded(int ops)
    {
        if (replay is null)
        {
            throw new InvalidOperationException("The replay workload needs --replay <tsv>.");
        }

        // Whole files, at most `ops` blocks (at least one file).
        var files = 1;
        while (files < replay.Files && replay.FileStarts[files + 1] <= ops)
        {
            files++;
        }

        var end = replay.FileStarts[files];
        var fullHashes = new string?[files];
        return new BlockStream
        {
            Hashes = replay.Hashes[..end],
            Sizes = replay.Sizes[..end],
            PrefillIndex = Enumerable.Repeat(-1, end).ToArray(),
            GroupStarts = replay.FileStarts[..(files + 1)],
            GroupFullHashes = fullHashes,
        };
    }

    /// <summary>New blocks with file-structured sizes: whole files of full blocks ending in a remainder block.</summary>
    private sealed class NewBlockSource(int seed, HashDomain domain, Random rng)
    {
        private long _counter;
        private long _file;
        private int _block;
        private int _blocks;

        public (string Hash, long Size) Next()
        {
            if (_block >= _blocks)
            {
                _file = FileSizeModel.NextFileSize(rng);
                _blocks = FileSizeModel.BlockCount(_file);
                _block = 0;
            }

            return (BlockHashes.Of(seed, domain, _counter++), FileSizeModel.BlockBytes(_file, _block++));
        }
    }
}
