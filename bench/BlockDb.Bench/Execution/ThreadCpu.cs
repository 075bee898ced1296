using System.Runtime.InteropServices;

namespace BlockDb.Bench.Execution;

/// <summary>
/// The calling thread's CPU time (<c>clock_gettime(CLOCK_THREAD_CPUTIME_ID)</c>, Linux): the time the thread ran,
/// without the time it waited for a core. On a shared, loaded machine a thread that is preempted mid-run loses wall
/// time but not CPU time, so ops per CPU second is the steadier figure for work that does not wait on I/O; the C
/// baselines read the same clock.
/// </summary>
internal static partial class ThreadCpu
{
    private const int ClockThreadCpuTimeId = 3;

    /// <summary>The calling thread's CPU time in nanoseconds, or 0 when the clock cannot be read.</summary>
    public static long NowNs() => ClockGetTime(ClockThreadCpuTimeId, out var t) == 0 ? (t.Seconds * 1_000_000_000L) + t.Nanoseconds : 0;

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clock, out Timespec time);

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }
}
