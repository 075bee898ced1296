using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using BlockDb.KeyMap;
using MathNet.Numerics.Statistics;

namespace BlockDb.Bench.Micro;

/// <summary>
/// The key map's key on its hot path (<c>keyof [rounds]</c>): the seeded XXH3 of hash and size that a snapshot can
/// persist (<see cref="KeyHasher.KeyOf"/>) against the per-process <see cref="HashCode"/> key it replaced, interleaved
/// (order alternating per round) so a loaded machine's drift hits both alike. Each round keys 4,096 random 32-byte
/// hashes 500 times each way; prints ns per key of each and the ratio new / old per round, then the medians.
/// </summary>
internal static class KeyOfProbe
{
    private const int Pool = 4096;
    private const int Repeats = 500;

    public static int Run(int rounds)
    {
        var hashes = Enumerable.Range(0, Pool).Select(_ => RandomNumberGenerator.GetBytes(32)).ToArray();
        var hasher = KeyHasher.Random();
        uint sink = 0;

        double Time(bool xxh3)
        {
            var watch = Stopwatch.StartNew();
            for (var r = 0; r < Repeats; r++)
            {
                for (var i = 0; i < hashes.Length; i++)
                {
                    sink ^= xxh3 ? hasher.KeyOf(hashes[i], 102_400 + i) : OldKeyOf(hashes[i], 102_400 + i);
                }
            }

            return watch.Elapsed.TotalNanoseconds / ((double)Repeats * Pool);
        }

        // Past tiered compilation (the first rounds run tier-0 code) before anything is counted.
        for (var warm = 0; warm < 20; warm++)
        {
            Time(true);
            Time(false);
        }
        var ratios = new List<double>();
        var (olds, news) = (new List<double>(), new List<double>());
        for (var round = 0; round < rounds; round++)
        {
            double oldNs, newNs;
            if (round % 2 == 0)
            {
                (oldNs, newNs) = (Time(false), Time(true));
            }
            else
            {
                newNs = Time(true);
                oldNs = Time(false);
            }

            olds.Add(oldNs);
            news.Add(newNs);
            ratios.Add(newNs / oldNs);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"round {round}: HashCode {oldNs:F2} ns, XXH3 {newNs:F2} ns, new/old {newNs / oldNs:F3}"));
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"median of {rounds}: HashCode {olds.Median():F2} ns, XXH3 {news.Median():F2} ns, new/old {ratios.Median():F3} [{ratios.Min():F3}-{ratios.Max():F3}] (sink {sink})"));
        return 0;
    }

    /// <summary>The key before the snapshot (random seed per process, so it could not be persisted).</summary>
    private static uint OldKeyOf(ReadOnlySpan<byte> hash, long size)
    {
        var h = default(HashCode);
        h.AddBytes(hash);
        h.Add(size);
        return (uint)h.ToHashCode();
    }
}
