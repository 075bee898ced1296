using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using BlockDb;
using BlockDb.Drivers;
using BlockDb.Opening;

// Times the KeyMap layout's first load (issue 13 item 6, "open at scale").
//
//   build <template.db> <blocks>                 a KeyMap file of <blocks> distinct 32-byte hashes, by ImportBlocksAsync (PInvoke)
//   time <template.db> <runs> [providers] [dir] [label=BlockDb.MapLoad.dll ...]
//                                                per run, per build and provider (order rotated each run): a fresh copy of the
//                                                template, opened in a new process of that build, FindBlockAsync of an existing
//                                                block timed (wall and CPU); prints each run, then median, min and max per
//                                                build and provider and the ratio to PInvoke of the same build
//   once <db> <provider>                         one open + first lookup in this process (what 'time' runs per sample)
//
// 'once' (and so 'time') looks up the blocks with IDs 1 and 2, read from the file beforehand (one page), so any KeyMap
// file works: this program's templates and the benchmark harness's.
//
//   once <db> <provider> <ops> <warmup> <built>  then, in the same process, µs per op of <ops> FindBlockAsync of random
//                                                blocks among the first <built> (the count 'build' wrote: block ID i + 1
//                                                has TestHash(i)) and <ops> SelectXorInsertAsync (80 % new blocks, 10 %
//                                                existing ones, 10 % earlier new ones; commit every 1,000, final commit
//                                                timed), each after <warmup> untimed ops; the file keeps the new blocks
//   scan <db> <provider> <runs>                  the catch-up statement alone through the driver: step only, then step and
//                                                the four columns, then the key as well (where a load's time goes)
//
// The machine this was written on has 2 shared cores: compare providers within one 'time' run, not across runs.
var culture = CultureInfo.InvariantCulture;
switch (args)
{
    case ["build", var path, var count]:
        await Build(path, long.Parse(count, culture));
        return 0;
    case ["once", var path, var provider, .. var ops]:
        await Once(path, provider, ops.Length == 3 ? (int.Parse(ops[0], culture), int.Parse(ops[1], culture), long.Parse(ops[2], culture)) : null);
        return 0;
    case ["time", var template, var runs, .. var rest]:
        return await Time(template, int.Parse(runs, culture), rest.Length > 0 ? rest[0].Split(',') : ["PInvoke", "SystemData", "MicrosoftData"], rest.Length > 1 ? rest[1] : Path.GetDirectoryName(Path.GetFullPath(template))!, rest.Length > 2 ? rest[2..] : []);
    case ["scan", var path, var provider, var runs, .. var variant]:
        Scan(path, provider, int.Parse(runs, culture), variant.Length > 0 ? variant[0] : "new");
        return 0;
    case ["plan", var path, var sql]:
        using (var connection = ProviderCatalog.SqliteDriver("PInvoke").Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadOnly)))
        using (var plan = connection.Prepare(new SqlStatement("Plan", "EXPLAIN QUERY PLAN " + sql)))
        {
            while (plan.Step())
            {
                Console.WriteLine(plan.ColumnText(3));
            }
        }

        return 0;
    default:
        Console.Error.WriteLine("usage: build <template.db> <blocks> | time <template.db> <runs> [providers] [dir] | once <db> <provider> [<ops> <warmup> <built>] | scan <db> <provider> <runs>");
        return 2;
}

static async Task Build(string path, long count)
{
    foreach (var suffix in (string[])["", "-wal", "-shm"])
    {
        File.Delete(path + suffix);
    }

    var watch = Stopwatch.StartNew();
    await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = "PInvoke", DataSource = path, Index = { Layout = BlockLayout.KeyMap } }))
    {
        var result = await db.ImportBlocksAsync(Blocks(count), new ImportOptions { ItemsPerTransaction = 1_000_000 });
        Console.WriteLine($"built {path}: {result.Created:N0} blocks in {watch.Elapsed.TotalSeconds:F1} s");
    }

    Console.WriteLine($"file {new FileInfo(path).Length / 1048576.0:F0} MiB");
}

static async IAsyncEnumerable<ImportBlock> Blocks(long count)
{
    for (long i = 0; i < count; i++)
    {
        yield return new ImportBlock(new BlockKey(TestHash(i), SizeOf(i)));
    }

    await Task.CompletedTask;
}

static async Task Once(string path, string provider, (int Ops, int Warmup, long Built)? perOp)
{
    var (first, second) = (Row(path, 1), Row(path, 2));
    var options = new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = BlockLayout.KeyMap } };
    var snapshotFile = path + "-blockdb-keymap";
    var snapshotBefore = File.Exists(snapshotFile) ? new FileInfo(snapshotFile).Length : 0;
    var total = Stopwatch.StartNew();
    var db = BlockDatabase.Open(options);
    var session = await db.OpenSessionAsync();
    var opened = total.Elapsed;
    var cpuBefore = Process.GetCurrentProcess().TotalProcessorTime;
    var find = Stopwatch.StartNew();
    var id = await session.FindBlockAsync(first.Block);
    var found = find.Elapsed;
    var cpu = Process.GetCurrentProcess().TotalProcessorTime - cpuBefore;
    var again = Stopwatch.StartNew();
    var id2 = await session.FindBlockAsync(second.Block);
    var lookup = again.Elapsed;
    if (id != 1 || id2 != 2)
    {
        throw new InvalidOperationException($"The blocks with IDs 1 and 2 were found as {id} and {id2}.");
    }

    var (blocks, bytes) = ((ISqliteBlockDatabase)db).KeyMapUsage;
    var (gcHeap, workingSet) = (GC.GetTotalMemory(false), Environment.WorkingSet);
    var timed = perOp is var (ops, warmup, built) ? await PerOp(session, built, ops, warmup) : "";
    await session.DisposeAsync();

    // The database's dispose writes the key-map snapshot (issue 13 item 6) unless it is unchanged or BlockDb:Index:KeyMapFile is Off.
    var disposing = Stopwatch.StartNew();
    await db.DisposeAsync();
    var disposed = disposing.Elapsed;
    var snapshotAfter = File.Exists(snapshotFile) ? new FileInfo(snapshotFile).Length : 0;
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"RESULT {provider} open_ms={opened.TotalMilliseconds:F1} first_find_ms={found.TotalMilliseconds:F1} first_find_cpu_ms={cpu.TotalMilliseconds:F0} second_find_us={lookup.TotalMicroseconds:F1} map_blocks={blocks} map_bytes={bytes} gc_heap_mb={gcHeap / 1048576.0:F1} peak_ws_mb={workingSet / 1048576.0:F0} snapshot_before={snapshotBefore} snapshot_after={snapshotAfter} dispose_ms={disposed.TotalMilliseconds:F1}{timed}"));
}

// µs per op of select and select-xor-insert on a loaded map (see the header); base64 hashes made before the timed loops, as the harness does.
static async Task<string> PerOp(IBlockSession session, long blocks, int ops, int warmup)
{
    var random = new Random(42);
    var existing = Enumerable.Range(0, warmup + ops).Select(_ => random.NextInt64(blocks)).ToArray();
    var select = existing.Select(i => (Hash: TestHash(i).ToString(), Size: SizeOf(i), Id: i + 1)).ToArray();
    var fresh = (1L << 40) + ((long)Random.Shared.Next(1 << 16) << 20); // new blocks' indexes, apart from earlier runs' on the same file
    var xor = new (string Hash, long Size)[warmup + ops];
    var created = new List<long>();
    for (var k = 0; k < xor.Length; k++)
    {
        var roll = random.NextDouble();
        var i = roll < 0.1 ? existing[k] : roll < 0.2 && created.Count > 0 ? created[random.Next(created.Count)] : fresh + k;
        if (i == fresh + k)
        {
            created.Add(i);
        }

        xor[k] = (TestHash(i).ToString(), SizeOf(i));
    }

    for (var k = 0; k < warmup; k++)
    {
        _ = await session.FindBlockAsync(select[k].Block);
    }

    var watch = Stopwatch.StartNew();
    for (var k = warmup; k < select.Length; k++)
    {
        if (await session.FindBlockAsync(select[k].Block) != select[k].Id)
        {
            throw new InvalidOperationException($"Block {select[k].Id} was not found under its hash.");
        }
    }

    var selectUs = watch.Elapsed.TotalMicroseconds / ops;
    for (var k = 0; k < warmup; k++)
    {
        _ = await session.SelectXorInsertAsync(xor[k].Block);
    }

    await session.CommitAsync();
    watch.Restart();
    for (var k = warmup; k < xor.Length; k++)
    {
        _ = await session.SelectXorInsertAsync(xor[k].Block);
    }

    await session.CommitAsync();
    return string.Create(CultureInfo.InvariantCulture, $" select_us={selectUs:F2} xor_us={watch.Elapsed.TotalMicroseconds / ops:F2}");
}

// The hash and size of the block with this ID, read through the PInvoke driver on a connection of its own.
static (BlockHash Hash, long Size) Row(string path, long id)
{
    using var connection = ProviderCatalog.SqliteDriver("PInvoke").Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadOnly));
    using var statement = connection.Prepare(new SqlStatement("Row", """SELECT "Hash", "Size" FROM "Block" WHERE "ID" = @Id""", "@Id"));
    statement.BindInt64(1, id);
    Span<byte> hash = stackalloc byte[BlockHash.MaxBytes];
    return statement.Step()
        ? (new BlockHash(hash[..statement.ColumnBlob(0, hash)]), statement.ColumnInt64(1))
        : throw new InvalidOperationException($"{path} has no block with ID {id}.");
}

static async Task<int> Time(string template, int runs, string[] providers, string dir, string[] builds)
{
    // A build is label=path-to-BlockDb.MapLoad.dll (default: this one, labelled "this"), so a baseline build runs interleaved with the changed one.
    var variants = (builds.Length == 0 ? [$"this={typeof(Marker).Assembly.Location}"] : builds)
        .Select(b => b.Split('=', 2))
        .SelectMany(b => providers.Select(p => (Label: b[0], Dll: b[1], Provider: p)))
        .ToArray();
    var results = variants.ToDictionary(v => (v.Label, v.Provider), _ => new List<(double Open, double Find, double Cpu, long Bytes, long Blocks)>());
    var self = Environment.ProcessPath!;
    for (var run = 0; run < runs; run++)
    {
        for (var k = 0; k < variants.Length; k++)
        {
            var (label, dll, provider) = variants[(run + k) % variants.Length];
            var copy = Path.Combine(dir, $"mapload-{label}-{provider}.db");
            foreach (var suffix in (string[])["", "-wal", "-shm"])
            {
                File.Delete(copy + suffix);
            }

            File.Copy(template, copy);
            var start = new ProcessStartInfo(self.EndsWith("dotnet", StringComparison.Ordinal) ? self : "dotnet") { RedirectStandardOutput = true, RedirectStandardError = true };
            start.ArgumentList.Add(dll);
            start.ArgumentList.Add("once");
            start.ArgumentList.Add(copy);
            start.ArgumentList.Add(provider);
            using var child = Process.Start(start)!;
            var output = await child.StandardOutput.ReadToEndAsync();
            var error = await child.StandardError.ReadToEndAsync();
            await child.WaitForExitAsync();
            var line = output.Split('\n').FirstOrDefault(l => l.StartsWith("RESULT ", StringComparison.Ordinal));
            if (child.ExitCode != 0 || line is null)
            {
                Console.Error.WriteLine($"{label} {provider} run {run} failed ({child.ExitCode}): {output}{error}");
                return 1;
            }

            Console.WriteLine($"run {run + 1}: {label} {line[7..]}");
            var fields = line.Split(' ').Skip(2).Select(f => f.Split('=')).ToDictionary(f => f[0], f => f[1]);
            double Number(string name) => double.Parse(fields[name], CultureInfo.InvariantCulture);
            results[(label, provider)].Add((Number("open_ms"), Number("first_find_ms"), Number("first_find_cpu_ms"), (long)Number("map_bytes"), (long)Number("map_blocks")));
            foreach (var suffix in (string[])["", "-wal", "-shm"])
            {
                File.Delete(copy + suffix);
            }
        }
    }

    static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }

    Console.WriteLine();
    Console.WriteLine($"{runs} runs per row; wall = FindBlockAsync's elapsed time, CPU = the process's CPU time during it (all threads)");
    Console.WriteLine("| build | provider | first lookup wall, median s | min–max | ratio to PInvoke (same build) | CPU, median s | min–max | CPU ratio | open, median ms | map bytes/block |");
    Console.WriteLine("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    foreach (var ((label, provider), list) in results)
    {
        var baseline = results.TryGetValue((label, "PInvoke"), out var p) ? p : list;
        var finds = list.Select(r => r.Find).ToArray();
        var cpus = list.Select(r => r.Cpu).ToArray();
        var (median, cpuMedian) = (Median(finds), Median(cpus));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {label} | {provider} | {median / 1000:F2} | {finds.Min() / 1000:F2}–{finds.Max() / 1000:F2} | {median / Median(baseline.Select(r => r.Find)):F2}x | {cpuMedian / 1000:F2} | {cpus.Min() / 1000:F2}–{cpus.Max() / 1000:F2} | {cpuMedian / Median(baseline.Select(r => r.Cpu)):F2}x | {Median(list.Select(r => r.Open)):F0} | {(double)list[0].Bytes / list[0].Blocks:F1} |"));
    }

    return 0;
}

static void Scan(string path, string provider, int runs, string variant)
{
    var driver = ProviderCatalog.SqliteDriver(provider);
    using var connection = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadOnly));
    connection.Execute("PRAGMA mmap_size = 67108864");
    connection.Execute("PRAGMA cache_size = -65536");
    var statement = connection.Prepare(new SqlStatement("Scan", variant == "old"
        ? """SELECT S."MaxBlockId", S."Generation", V."schema_version", B."ID", B."Hash", B."Size" FROM "BlockDbState" S CROSS JOIN pragma_schema_version V LEFT JOIN "Block" B ON B."ID" > @After WHERE S."Key" = 1 ORDER BY B."ID" """
        : """SELECT S."MaxBlockId", S."Generation", (SELECT "schema_version" FROM pragma_schema_version), B."ID", B."Hash", B."Size" FROM "BlockDbState" S LEFT JOIN "Block" B ON B."ID" > @After WHERE S."Key" = 1 ORDER BY B."ID" """,
        "@After"));
    Span<byte> hash = stackalloc byte[66];
    for (var run = 0; run < runs; run++)
    {
        foreach (var mode in (string[])["step", "columns", "key"])
        {
            var cpu = Process.GetCurrentProcess().TotalProcessorTime;
            var watch = Stopwatch.StartNew();
            statement.BindInt64(1, long.MinValue);
            long rows = 0;
            ulong sum = 0;
            while (statement.Step())
            {
                rows++;
                if (mode == "step")
                {
                    continue;
                }

                var id = statement.ColumnInt64(3);
                var length = statement.ColumnBlob(4, hash);
                var size = statement.ColumnInt64(5);
                sum += mode == "key" ? Key(hash[..length], size) ^ (ulong)id : (ulong)(id + length + size);
            }

            statement.Reset();
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"SCAN {provider} run={run + 1} mode={mode} rows={rows} ms={watch.Elapsed.TotalMilliseconds:F0} ns_per_row={watch.Elapsed.TotalNanoseconds / Math.Max(1, rows):F0} cpu_ns_per_row={(Process.GetCurrentProcess().TotalProcessorTime - cpu).TotalNanoseconds / Math.Max(1, rows):F0} ({sum % 10})"));
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static uint Key(ReadOnlySpan<byte> hash, long size)
    {
        var h = default(HashCode);
        h.AddBytes(hash);
        h.Add(size);
        return (uint)h.ToHashCode();
    }
}

// Block i of the template: a 32-byte hash from a fixed mix of i (the same in every process), 100 KiB or a smaller tail size.
static BlockHash TestHash(long i)
{
    Span<byte> bytes = stackalloc byte[32];
    for (var k = 0; k < 4; k++)
    {
        var z = (ulong)((i * 4) + k + 1) * 0x9E3779B97F4A7C15UL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        z ^= z >> 31;
        System.Buffers.Binary.BinaryPrimitives.WriteUInt64LittleEndian(bytes[(k * 8)..], z);
    }

    return new BlockHash(bytes);
}

static long SizeOf(long i) => i % 6 == 5 ? 1 + (i * 7919 % 102400) : 102400;

internal sealed class Marker;
