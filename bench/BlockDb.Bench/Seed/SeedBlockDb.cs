namespace BlockDb.Bench.Seed;

/// <summary>
/// The seed's six workloads as a backup engine calls BlockDb: one session, the public API with base64 text hashes
/// (the seed's keys as they are), <c>CommitEvery</c> 0 and one <see cref="IBlockSession.CommitAsync"/> at the end
/// (one transaction per run, as the seed).
/// </summary>
internal static class SeedBlockDb
{
    /// <summary>Writes the pre-filled blocks and blocksets, one <see cref="IBlockWriter.AddBlocksetAsync"/> per blockset; checks every ID is the seed's.</summary>
    public static async Task FillAsync(IBlockSession session, SeedData data)
    {
        var next = 0;
        foreach (var b in data.Blocksets)
        {
            var keys = new BlockKey[b.Count];
            for (var i = 0; i < keys.Length; i++)
            {
                var e = data.Entries[next + i];
                keys[i] = new BlockKey(BlockHash.Parse(e.Hash), e.Size);
            }

            var results = new SelectXorInsertResult[keys.Length];
            var id = await session.AddBlocksetAsync(keys, results);
            for (var i = 0; i < keys.Length; i++)
            {
                if (results[i].Id != data.Entries[next + i].Id)
                {
                    throw new InvalidOperationException($"Block {next + i} got ID {results[i].Id}, not {data.Entries[next + i].Id}: the pair would not compare the same rows.");
                }
            }

            if (id != b.Id)
            {
                throw new InvalidOperationException($"Blockset {b.Id} got ID {id}.");
            }

            next += keys.Length;
        }

        await session.CommitAsync();
    }

    /// <summary>Runs one input and commits; returns a digest of what it read (the same as the naive side's).</summary>
    public static ValueTask<long> RunAsync(IBlockSession s, SeedWorkload workload, SeedInput input) => workload switch
    {
        SeedWorkload.Insert => Insert(s, input.Entries),
        SeedWorkload.Select => Select(s, input.Entries),
        SeedWorkload.Xor1 or SeedWorkload.Xor2 => Xor(s, input.Entries),
        SeedWorkload.Join => Join(s, input.Blocksets),
        _ => NewBlockset(s, input.Entries, input.Breaks),
    };

    private static async ValueTask<long> Insert(IBlockSession s, SeedEntry[] entries)
    {
        long digest = 0;
        foreach (var e in entries)
        {
            digest += (await s.SelectXorInsertAsync(BlockKey.Parse(e.Hash, e.Size))).Id;
        }

        await s.CommitAsync();
        return digest;
    }

    private static async ValueTask<long> Select(IBlockSession s, SeedEntry[] entries)
    {
        long digest = 0;
        foreach (var e in entries)
        {
            digest += await s.FindBlockAsync(BlockKey.Parse(e.Hash, e.Size)) ?? -1;
        }

        await s.CommitAsync();
        return digest;
    }

    private static async ValueTask<long> Xor(IBlockSession s, SeedEntry[] entries)
    {
        long digest = 0;
        foreach (var e in entries)
        {
            digest += (await s.SelectXorInsertAsync(BlockKey.Parse(e.Hash, e.Size))).Id;
        }

        await s.CommitAsync();
        return digest;
    }

    /// <summary>The listing restore would use: into one reused buffer, binary hashes, paged until a page comes back short.</summary>
    private static async ValueTask<long> Join(IBlockSession s, SeedBlockset[] blocksets)
    {
        long digest = 0;
        var buffer = new BlocksetBlock[1024];
        foreach (var b in blocksets)
        {
            for (var from = 0; ;)
            {
                var count = await s.ListBlocksetBlocksAsync(b.Id, from, buffer);
                for (var i = 0; i < count; i++)
                {
                    digest += buffer[i].Block.Size + 1;
                }

                if (count < buffer.Length)
                {
                    break;
                }

                from = buffer[count - 1].Index + 1;
            }
        }

        await s.CommitAsync();
        return digest;
    }

    /// <summary>
    /// One <see cref="IBlockWriter.AddBlocksetAsync"/> per blockset, as an engine adds a file: the call select-xor-inserts
    /// each block itself and gives its ID (the seed's per-block find-or-insert and entry, in one call).
    /// </summary>
    private static async ValueTask<long> NewBlockset(IBlockSession s, SeedEntry[] entries, bool[] breaks)
    {
        long digest = 0;
        var keys = new List<BlockKey>(64);
        for (var i = 0; i < entries.Length; i++)
        {
            keys.Add(BlockKey.Parse(entries[i].Hash, entries[i].Size));
            if (breaks[i] || i == entries.Length - 1)
            {
                var results = new SelectXorInsertResult[keys.Count];
                await s.AddBlocksetAsync(keys.ToArray(), results);
                foreach (var r in results)
                {
                    digest += r.Id;
                }

                keys.Clear();
            }
        }

        await s.CommitAsync();
        return digest;
    }
}
