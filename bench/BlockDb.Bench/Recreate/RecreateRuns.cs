using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Data;
using BlockDb.Bench.Execution;
using BlockDb.Bench.Model;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Bench.Recreate;

/// <summary>One run of a rebuild: its side (a provider or C), layout and round, the two phases' wall and thread-CPU time, and what the oracle found.</summary>
internal sealed record RecreateRun(string Side, BlockLayout Layout, int Round, long BlocksNs, long BlocksCpuNs, long BlocksetsNs, long BlocksetsCpuNs, double Load, string? Error)
{
    public double BlocksPerSecond(int blocks) => BlocksNs > 0 ? blocks * 1e9 / BlocksNs : double.NaN;

    public double BlocksetsPerSecond(int files) => BlocksetsNs > 0 ? files * 1e9 / BlocksetsNs : double.NaN;
}

/// <summary>
/// The runs of <c>bench recreate</c>: the template (an empty file of the layout with the stream's volumes registered),
/// BlockDb's rebuild through the public API a recreate uses (<see cref="IBlockDatabase.ImportBlocksAsync"/> of the volume
/// index files, then <see cref="IBlockDatabase.ImportBlocksetsAsync"/> of the file lists), and the C loop on a copy of
/// the same template, each checked against the oracle: the counts, and every sampled blockset listed back block by block
/// (hash and size against the stream; the digest of their block IDs the same on every side).
/// </summary>
internal sealed class RecreateRuns(RecreateStream stream, string streamPath, string workDir, int batch, bool blocksOnly = false)
{
    /// <summary>The C side's name.</summary>
    public const string C = "C, plain";

    /// <summary>Each process's run file of its own, so two commands sharing a work folder never replace each other's file.</summary>
    private static readonly string RunFile = string.Create(CultureInfo.InvariantCulture, $"recreate-{Environment.ProcessId}.db");

    private readonly ImportBlock[] _blocks = Blocks(stream);
    private readonly ImportBlockset[] _blocksets = Blocksets(stream);

    /// <summary>Every <c>CheckEvery</c>-th blockset is listed back (about 2,000 of them).</summary>
    public int CheckEvery { get; } = Math.Max(1, stream.Files / 2000);

    /// <summary>The digest every side must give (the block IDs of the sampled blocksets: block i has ID i + 1 on both layouts).</summary>
    public ulong ExpectedDigest()
    {
        var digest = new Fnv64();
        for (var f = 0; f < stream.Files; f += CheckEvery)
        {
            for (var i = stream.Starts[f]; i < stream.Starts[f + 1]; i++)
            {
                digest.Add(stream.Refs[i] + 1L);
            }
        }

        return digest.Value;
    }

    /// <summary>The empty file of a layout with the volumes registered (built once with PInvoke, kept in the work folder).</summary>
    public async Task<string> TemplateAsync(BlockLayout layout)
    {
        var path = Path.Combine(workDir, string.Create(CultureInfo.InvariantCulture, $"recreate-{layout}-{stream.Volumes}v.db"));
        if (File.Exists(path))
        {
            return path;
        }

        var building = path + ".building";
        FreshCopy.Delete(building);
        await using (var db = BlockDatabase.Open(Options("PInvoke", building, layout)))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var v = 1; v <= stream.Volumes; v++)
            {
                var id = await session.RegisterVolumeAsync(string.Create(CultureInfo.InvariantCulture, $"duplicati-b{v:x8}.dblock.zip.aes"), VolumeState.Verified);
                if (id != v)
                {
                    throw new InvalidOperationException($"Volume {v} got ID {id}: the stream names volumes 1..{stream.Volumes}.");
                }
            }

            await session.CommitAsync();
        }

        using (var raw = ProviderCatalog.SqliteDriver("PInvoke").Open(new SqliteOpenOptions(building, SqliteOpenMode.ReadWrite, 5000)))
        {
            raw.Execute("PRAGMA wal_checkpoint(TRUNCATE)");
        }

        foreach (var sidecar in Directory.GetFiles(workDir, Path.GetFileName(building) + "-*"))
        {
            File.Delete(sidecar); // the KeyMap's map snapshot, named after the file it was built as
        }

        File.Move(building, path);
        return path;
    }

    /// <summary>BlockDb's rebuild on a fresh copy of the template, timed per phase, then checked.</summary>
    public async Task<RecreateRun> DotNetAsync(string provider, BlockLayout layout, int round, string template)
    {
        var path = FreshCopy.Create(template, Path.Combine(workDir, "runs"), RunFile);
        var load = Lifecycle.LifecycleStudy.LoadAverage();
        try
        {
            await using var db = BlockDatabase.Open(Options(provider, path, layout));
            var options = new ImportOptions { ItemsPerTransaction = batch };
            ManagedRunner.GcQuiesce();
            var (blocks, blocksNs, blocksCpu) = await Timed(() => db.ImportBlocksAsync(Items(_blocks), options));
            var (sets, setsNs, setsCpu) = blocksOnly ? (new ImportResult(0, stream.Files, 0, 0, default), 0L, 0L) : await Timed(() => db.ImportBlocksetsAsync(Items(_blocksets), options));
            var error = blocks.Created != stream.Blocks || sets.Created != stream.Files
                ? $"created {blocks.Created:N0} blocks and {sets.Created:N0} blocksets; the stream has {stream.Blocks:N0} and {stream.Files:N0}"
                : await CheckAsync(db);
            return new RecreateRun(provider, layout, round, blocksNs, blocksCpu, setsNs, setsCpu, load, error);
        }
        catch (Exception e) when (e is BlockDbException or InvalidOperationException or ArgumentException)
        {
            return new RecreateRun(provider, layout, round, 0, 0, 0, 0, load, e.GetType().Name + ": " + e.Message);
        }
        finally
        {
            FreshCopy.Delete(path);
        }
    }

    /// <summary>The C loop (<c>blockdb_native.c --workload recreate</c>) on a fresh copy of the template.</summary>
    public RecreateRun Native(NativeBuild build, BlockLayout layout, int round, string template)
    {
        var path = FreshCopy.Create(template, Path.Combine(workDir, "runs"), RunFile);
        var load = Lifecycle.LifecycleStudy.LoadAverage();
        try
        {
            var pragmas = BlockDb.Sqlite.Pragmas.Resolve(Options("PInvoke", path, layout).Pragmas);
            var (code, stdout, stderr) = ProcessRunner.Run(build.Binary, [
                "--lib", build.Library, "--db", path, "--sql", build.SqlFile(pragmas), "--stream", streamPath,
                "--workload", "recreate", "--layout", layout == BlockLayout.KeyMap ? "keymap" : "text",
                "--batch", batch.ToString(CultureInfo.InvariantCulture), "--check-every", CheckEvery.ToString(CultureInfo.InvariantCulture),
                "--prefault-mb", "256", "--blocks-only", blocksOnly ? "1" : "0"]);
            var values = stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
                .Select(l => l.Split('=', 2)).Where(p => p.Length == 2).GroupBy(p => p[0]).ToDictionary(g => g.Key, g => g.Last()[1]);
            if (code != 0 || values.GetValueOrDefault("status") != "ok")
            {
                return new RecreateRun(C, layout, round, 0, 0, 0, 0, load, $"native exit {code}: {values.GetValueOrDefault("error") ?? (stdout + stderr).Trim()}");
            }

            long L(string key) => long.Parse(values[key], CultureInfo.InvariantCulture);
            var counts = blocksOnly ? string.Create(CultureInfo.InvariantCulture, $"{stream.Blocks},0,0") : string.Create(CultureInfo.InvariantCulture, $"{stream.Blocks},{stream.Files},{stream.Refs.Length}");
            var error = values["counts"] != counts ? $"counts {values["counts"]}, expected {counts}"
                : !blocksOnly && ulong.Parse(values["digest"], CultureInfo.InvariantCulture) != ExpectedDigest() ? "the sampled blocksets' block IDs differ from the oracle's"
                : null;
            return new RecreateRun(C, layout, round, L("blocks_ns"), L("blocks_cpu_ns"), L("blocksets_ns"), L("blocksets_cpu_ns"), load, error);
        }
        finally
        {
            FreshCopy.Delete(path);
        }
    }

    private static BlockDbOptions Options(string provider, string path, BlockLayout layout) => new()
    {
        Provider = provider,
        DataSource = path,
        Pragmas = PragmaSet.Get(PragmaSet.RecommendedName).Create(),
        Index = new IndexOptions { Layout = layout },
    };

    /// <summary>Wall and calling-thread CPU time of one import call (CPU 0 when the call left its thread).</summary>
    private static async Task<(ImportResult Result, long WallNs, long CpuNs)> Timed(Func<ValueTask<ImportResult>> start)
    {
        var (wall, cpu) = (Stopwatch.GetTimestamp(), ThreadCpu.NowNs());
        var call = start();
        var onThisThread = call.IsCompleted;
        var result = onThisThread ? call.Result : await call;
        var cpuNs = onThisThread ? ThreadCpu.NowNs() - cpu : 0;
        return (result, (long)Stopwatch.GetElapsedTime(wall).TotalNanoseconds, cpuNs);
    }

    /// <summary>The counts and every sampled blockset listed back; null when all match.</summary>
    private async Task<string?> CheckAsync(IBlockDatabase db)
    {
        await using var session = await db.OpenSessionAsync();
        var counts = await session.GetCountsAsync();
        if (blocksOnly)
        {
            return counts == new BlockDbCounts(stream.Blocks, 0, 0) ? null : $"counts {counts}, expected {stream.Blocks:N0} blocks and nothing else";
        }

        if (counts != new BlockDbCounts(stream.Blocks, stream.Files, stream.Refs.Length))
        {
            return $"counts {counts}, expected {stream.Blocks:N0} blocks, {stream.Files:N0} blocksets, {stream.Refs.Length:N0} entries";
        }

        var digest = new Fnv64();
        var buffer = new BlocksetBlock[4096];
        for (var f = 0; f < stream.Files; f += CheckEvery)
        {
            var expected = _blocksets[f].Blocks;
            var read = 0;
            while (read < expected.Count)
            {
                var n = await session.ListBlocksetBlocksAsync(f + 1, read, buffer);
                if (n == 0)
                {
                    return $"blockset {f + 1} lists {read} blocks, expected {expected.Count}";
                }

                for (var i = 0; i < n; i++)
                {
                    if (buffer[i].Block != expected[read + i])
                    {
                        return $"blockset {f + 1} block {read + i} is {buffer[i].Block}, expected {expected[read + i]}";
                    }

                    digest.Add(buffer[i].BlockId);
                }

                read += n;
            }
        }

        return digest.Value == ExpectedDigest() ? null : "the sampled blocksets' block IDs differ from the oracle's";
    }

    private static ImportBlock[] Blocks(RecreateStream s)
    {
        var blocks = new ImportBlock[s.Blocks];
        for (var i = 0; i < blocks.Length; i++)
        {
            blocks[i] = new ImportBlock(new BlockKey(new BlockHash(s.Hashes.AsSpan(i * 32, 32)), s.Sizes[i]), RecreateStream.VolumeOf(i));
        }

        return blocks;
    }

    private static ImportBlockset[] Blocksets(RecreateStream s)
    {
        var sets = new ImportBlockset[s.Files];
        for (var f = 0; f < sets.Length; f++)
        {
            var keys = new BlockKey[s.Starts[f + 1] - s.Starts[f]];
            for (var i = 0; i < keys.Length; i++)
            {
                var b = s.Refs[s.Starts[f] + i];
                keys[i] = new BlockKey(new BlockHash(s.Hashes.AsSpan(b * 32, 32)), s.Sizes[b]);
            }

            sets[f] = new ImportBlockset(keys, new BlockHash(s.FullHashes.AsSpan(f * 32, 32)));
        }

        return sets;
    }

    private static async IAsyncEnumerable<T> Items<T>(T[] items)
    {
        foreach (var item in items)
        {
            yield return item;
        }

        await Task.CompletedTask.ConfigureAwait(false);
    }
}
