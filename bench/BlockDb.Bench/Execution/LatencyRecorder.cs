using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Per-op latency without a clock read per op when groups are larger than 1: a <see cref="Stopwatch"/>
/// timestamp every <c>group</c> ops, each sample being the group's time divided by its op count. The final
/// commit is added to the last sample. Allocation-free while timing (the buffer is sized up front).
/// </summary>
internal sealed class LatencyRecorder(int maxOps, int group)
{
    private readonly long[] _ticks = new long[(maxOps / Math.Max(1, group)) + 2];
    private readonly int _group = Math.Max(1, group);
    private int _count;
    private int _inGroup;
    private int _lastDivisor;
    private long _last;

    public long StartTimestamp { get; private set; }

    public long EndTimestamp { get; private set; }

    /// <summary>The recording thread's CPU time from <see cref="Start"/> to <see cref="Stop"/>, in nanoseconds (<see cref="ThreadCpu"/>).</summary>
    public long CpuNs { get; private set; }

    public void Start()
    {
        _count = 0;
        _inGroup = 0;
        _lastDivisor = _group;
        CpuNs = ThreadCpu.NowNs();
        StartTimestamp = _last = Stopwatch.GetTimestamp();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Tick()
    {
        if (++_inGroup == _group)
        {
            var t = Stopwatch.GetTimestamp();
            _ticks[_count++] = t - _last;
            _last = t;
            _inGroup = 0;
        }
    }

    public void Stop()
    {
        var t = Stopwatch.GetTimestamp();
        CpuNs = ThreadCpu.NowNs() - CpuNs;
        EndTimestamp = t;
        if (_inGroup > 0)
        {
            _ticks[_count++] = t - _last;
            _lastDivisor = _inGroup;
        }
        else if (_count > 0)
        {
            _ticks[_count - 1] += t - _last;
        }
    }

    /// <summary>The per-op samples in nanoseconds.</summary>
    public double[] SamplesNs()
    {
        var toNs = 1e9 / Stopwatch.Frequency;
        var samples = new double[_count];
        for (var i = 0; i < _count; i++)
        {
            samples[i] = _ticks[i] * toNs / (i == _count - 1 ? _lastDivisor : _group);
        }

        return samples;
    }
}

/// <summary>What a loop returns: ops, secondary units, blocks created and the digest of its results.</summary>
internal readonly record struct Tally(long Ops, long Units, long Created, ulong Digest);
