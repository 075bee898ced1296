using System.Diagnostics;
using System.Globalization;
using BlockDb.Bench.Execution;
using MathNet.Numerics.Statistics;

namespace BlockDb.Bench.Micro;

/// <summary>
/// A file of 16 blocks, per-block calls against one call, measured interleaved for a shared, loaded machine
/// (<c>file16 [rounds] [files] [providers] [layouts]</c>): per provider and layout, one session (CommitEvery 0, one open
/// write transaction) on a copy of a 100,000-block file; each file is 12 known blocks and 4 new ones (new in every
/// file). The per-block path is what an engine holding Duplicati's base64 text does: 16 ×
/// <c>SelectXorInsertAsync(BlockKey.Parse(text))</c>, then <c>AddBlocksetAsync</c> of the same keys; the one call is
/// <c>AddBlocksetAsync</c> of the binary keys. Each round runs <c>files</c> files each way in alternating order and rolls
/// back after each side (the table stays its size). Prints per round, then the median ratio per-block ÷ one call of wall
/// time and of the thread's CPU time [min–max], µs per block and bytes per block.
/// </summary>
internal static class FileOfSixteenProbe
{
    private const int Rows = 100_000;
    private const int Blocks = 16;

    public static int Run(int rounds, int files, string[] providers, BlockLayout[] layouts)
    {
        var culture = CultureInfo.InvariantCulture;
        Console.WriteLine(string.Create(culture, $"file of 16 (12 known + 4 new), {Rows:N0} rows, {files:N0} files per side per round, {rounds} rounds, load average {File.ReadAllText("/proc/loadavg").Trim()}"));
        foreach (var layout in layouts)
        {
            foreach (var provider in providers)
            {
                RunOne(provider, layout, rounds, files);
            }
        }

        Console.WriteLine(string.Create(culture, $"load average at the end {File.ReadAllText("/proc/loadavg").Trim()}"));
        return 0;
    }

    private static void RunOne(string provider, BlockLayout layout, int rounds, int files)
    {
        var culture = CultureInfo.InvariantCulture;
        var folder = Path.Combine(Path.GetTempPath(), "blockdb-micro", $"file16-{Environment.ProcessId}");
        Directory.CreateDirectory(folder);
        var path = Path.Combine(folder, $"{provider}-{layout}.db");
        File.Copy(MicroData.Template(Rows, layout), path, overwrite: true);
        using var database = BlockDatabase.Open(new BlockDbOptions
        {
            Provider = provider,
            DataSource = path,
            Pragmas = new PragmaOptions { Preset = PragmaPreset.Recommended },
            Batching = new BatchingOptions { CommitEvery = 0, OnDispose = DisposeBehavior.Rollback },
            Index = new IndexOptions { Layout = layout },
        });
        using var session = database.OpenSessionAsync().GetAwaiter().GetResult();
        var known = Enumerable.Range(0, 4096).Select(i => MicroData.Bytes(1, i * (Rows / 4096))).ToArray();
        var keys = new BlockKey[Blocks];
        var texts = new string[Blocks];
        var results = new SelectXorInsertResult[Blocks];
        var next = 0;

        // Fills the file's keys: 12 known, 4 never seen (a new domain-3 index each).
        void NextFile()
        {
            for (var j = 0; j < Blocks; j++)
            {
                var hash = j % 4 == 3 ? MicroData.Bytes(3, next * Blocks + j) : known[(next * 12 + j) & 4095];
                keys[j] = new BlockKey(hash, MicroData.BlockSize);
                texts[j] = hash.ToString();
            }

            next++;
        }

        (double WallNs, double CpuNs, double Bytes) Side(bool perBlock)
        {
            long bytes = 0, cpu = 0, wall = 0;
            for (var f = 0; f < files; f++)
            {
                NextFile(); // the keys' hashing and text are the caller's, not timed
                var b = GC.GetAllocatedBytesForCurrentThread();
                var c = ThreadCpu.NowNs();
                var w = Stopwatch.GetTimestamp();
                if (perBlock)
                {
                    for (var j = 0; j < Blocks; j++)
                    {
                        var key = BlockKey.Parse(texts[j], MicroData.BlockSize);
                        results[j] = session.SelectXorInsertAsync(key).GetAwaiter().GetResult();
                        keys[j] = key;
                    }
                }

                session.AddBlocksetAsync(keys, results).GetAwaiter().GetResult();
                wall += Stopwatch.GetTimestamp() - w;
                cpu += ThreadCpu.NowNs() - c;
                bytes += GC.GetAllocatedBytesForCurrentThread() - b;
            }

            session.RollbackAsync().GetAwaiter().GetResult();
            var n = (double)files * Blocks;
            return (wall * (1e9 / Stopwatch.Frequency) / n, cpu / n, bytes / n);
        }

        Side(true); // warm-up: JIT, caches, both paths' statements prepared
        Side(false);
        var wallRatios = new List<double>();
        var cpuRatios = new List<double>();
        var perBlockCpu = new List<double>();
        var oneCallCpu = new List<double>();
        double perBlockBytes = 0, oneCallBytes = 0;
        for (var r = 0; r < rounds; r++)
        {
            var perBlockFirst = r % 2 == 0;
            var first = Side(perBlockFirst);
            var second = Side(!perBlockFirst);
            var (pb, one) = perBlockFirst ? (first, second) : (second, first);
            wallRatios.Add(pb.WallNs / one.WallNs);
            cpuRatios.Add(pb.CpuNs / one.CpuNs);
            perBlockCpu.Add(pb.CpuNs);
            oneCallCpu.Add(one.CpuNs);
            (perBlockBytes, oneCallBytes) = (Math.Max(perBlockBytes, pb.Bytes), Math.Max(oneCallBytes, one.Bytes));
            Console.WriteLine(string.Create(culture, $"  {provider} {layout} round {r + 1}: per-block {pb.WallNs / 1000:F2} us wall / {pb.CpuNs / 1000:F2} CPU, one call {one.WallNs / 1000:F2} / {one.CpuNs / 1000:F2} (per block)"));
        }

        Console.WriteLine(string.Create(culture,
            $"{provider} {layout}: per-block {perBlockCpu.Median() / 1000:F2} us/block CPU ({perBlockBytes:F0} B/block), one call {oneCallCpu.Median() / 1000:F2} ({oneCallBytes:F0} B/block); ratio CPU {cpuRatios.Median():F2}x [{cpuRatios.Min():F2}-{cpuRatios.Max():F2}], wall {wallRatios.Median():F2}x [{wallRatios.Min():F2}-{wallRatios.Max():F2}]; load {File.ReadAllText("/proc/loadavg").Split(' ')[0]}"));
        session.Dispose();
        database.Dispose();
        File.Delete(path);
    }
}
