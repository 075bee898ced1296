using BlockDb.Bench.Model;

namespace BlockDb.Bench.Data;

/// <summary>What a correct run must return, computed without SQLite from the data alone.</summary>
/// <param name="Digest">The digest of the timed ops' results (see <see cref="ExpectedResults"/>).</param>
/// <param name="Created">Blocks the timed ops insert.</param>
/// <param name="Counts">Row counts after the run.</param>
/// <param name="Units">Secondary units of the timed ops (blocks, rows or files).</param>
public sealed record Expectation(ulong Digest, long Created, BlockDbCounts Counts, long Units);

/// <summary>
/// The oracle: SQLite gives rowids in insertion order (max + 1, nothing is deleted), so the IDs every
/// operation returns are known in advance. Digest per workload, in op order: select = ID; insert = new ID;
/// select-xor-insert = ID, created (0/1); join = per row index, ID, size; new blockset and replay = per block
/// ID, created, then per blockset its ID; import = the ID of every <see cref="WorkloadInfo.ImportCheckStride"/>-th
/// block, found again after the import. Every provider and the C baseline must match it exactly.
/// </summary>
public static class ExpectedResults
{
    /// <summary>Computes the expectation of one configuration.</summary>
    /// <param name="workload">The workload.</param>
    /// <param name="plan">The pre-filled content.</param>
    /// <param name="data">The warm-up and timed input.</param>
    /// <returns>The expectation.</returns>
    public static Expectation For(Workload workload, PrefillPlan plan, WorkloadData data)
    {
        var model = new Model(plan);
        model.Run(workload, data.Warmup, digest: false);
        var before = model.Created;
        var units = model.Run(workload, data.Timed, digest: true);
        return new Expectation(model.Digest.Value, model.Created - before, new BlockDbCounts(model.NextBlockId - 1, model.NextBlocksetId - 1, model.Entries), units);
    }

    private sealed class Model(PrefillPlan plan)
    {
        private readonly Dictionary<(string, long), long> _new = [];
        private Fnv64 _digest;

        public long NextBlockId { get; private set; } = plan.Blocks + 1;

        public long NextBlocksetId { get; private set; } = plan.Blocksets + 1;

        public long Entries { get; private set; } = plan.Blocks;

        public long Created { get; private set; }

        public Fnv64 Digest => _digest;

        /// <summary>Applies a stream; returns its secondary units.</summary>
        public long Run(Workload workload, BlockStream s, bool digest)
        {
            var d = new Fnv64();
            long units = 0;
            switch (workload)
            {
                case Workload.Select:
                    foreach (var index in s.PrefillIndex)
                    {
                        d.Add(index + 1);
                    }

                    break;
                case Workload.Insert:
                    for (var i = 0; i < s.Hashes.Length; i++)
                    {
                        _new[(s.Hashes[i], s.Sizes[i])] = NextBlockId;
                        d.Add(NextBlockId++);
                        Created++;
                    }

                    break;
                case Workload.Import:
                    var stride = WorkloadInfo.ImportCheckStride(s.Hashes.Length);
                    for (var i = 0; i < s.Hashes.Length; i++)
                    {
                        if (i % stride == 0)
                        {
                            d.Add(NextBlockId);
                        }

                        _new[(s.Hashes[i], s.Sizes[i])] = NextBlockId++;
                        Created++;
                    }

                    break;
                case Workload.Join:
                    foreach (var id in s.BlocksetIds!)
                    {
                        var f = (int)id - 1;
                        for (var j = plan.FileStarts[f]; j < plan.FileStarts[f + 1]; j++)
                        {
                            d.Add(j - plan.FileStarts[f]);
                            d.Add(j + 1);
                            d.Add(plan.Sizes[j]);
                            units++;
                        }
                    }

                    break;
                case Workload.NewBlockset or Workload.Replay:
                    var g = s.GroupStarts!;
                    for (var group = 0; group + 1 < g.Length; group++)
                    {
                        for (var i = g[group]; i < g[group + 1]; i++)
                        {
                            Resolve(s, i, ref d);
                        }

                        d.Add(NextBlocksetId++);
                        Entries += g[group + 1] - g[group];
                        units += workload == Workload.Replay ? 1 : g[group + 1] - g[group];
                    }

                    break;
                default:
                    for (var i = 0; i < s.Hashes.Length; i++)
                    {
                        Resolve(s, i, ref d);
                    }

                    break;
            }

            if (digest)
            {
                _digest = d;
            }

            return units;
        }

        private void Resolve(BlockStream s, int i, ref Fnv64 d)
        {
            if (s.PrefillIndex[i] >= 0)
            {
                d.Add(s.PrefillIndex[i] + 1);
                d.Add(0);
            }
            else if (_new.TryGetValue((s.Hashes[i], s.Sizes[i]), out var id))
            {
                d.Add(id);
                d.Add(0);
            }
            else
            {
                _new[(s.Hashes[i], s.Sizes[i])] = NextBlockId;
                d.Add(NextBlockId++);
                d.Add(1);
                Created++;
            }
        }
    }
}
