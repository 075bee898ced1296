using System.Diagnostics;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Runs one worker per dedicated thread: each does its warm-up, all meet at a barrier (where the optional
/// between-phases action runs, every worker idle), then each runs its timed part. The wall time is from the earliest start to the latest stop of the workers' recorders.
/// </summary>
internal static class WorkerThreads
{
    /// <summary>Runs the workers; returns the first failure, or <see langword="null"/>.</summary>
    public static Exception? Run(int count, Action<int> warmup, Action<int> timed, Action? betweenPhases = null)
    {
        var errors = new Exception?[count];
        using var barrier = new Barrier(count, betweenPhases is null ? null : _ => betweenPhases());
        var threads = new Thread[count];
        for (var t = 0; t < count; t++)
        {
            var index = t;
            threads[t] = new Thread(() =>
            {
                try
                {
                    warmup(index);
                }
                catch (Exception e)
                {
                    errors[index] = e;
                }

                barrier.SignalAndWait();
                if (errors[index] is null)
                {
                    try
                    {
                        timed(index);
                    }
                    catch (Exception e)
                    {
                        errors[index] = e;
                    }
                }
            })
            {
                IsBackground = true,
                Name = $"bench-worker-{index}",
            };
        }

        foreach (var thread in threads)
        {
            thread.Start();
        }

        foreach (var thread in threads)
        {
            thread.Join();
        }

        return errors.FirstOrDefault(e => e is not null);
    }

    /// <summary>Wall time in nanoseconds from the earliest start to the latest stop.</summary>
    public static long WallNs(IEnumerable<LatencyRecorder> recorders)
    {
        var list = recorders.ToList();
        var ticks = list.Max(r => r.EndTimestamp) - list.Min(r => r.StartTimestamp);
        return (long)(ticks * (1e9 / Stopwatch.Frequency));
    }
}
