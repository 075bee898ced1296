namespace BlockDb.Bench.Data;

/// <summary>FNV-1a 64-bit over little-endian int64 values; the C baseline computes the same digest.</summary>
public struct Fnv64
{
    private const ulong Offset = 14695981039346656037;
    private const ulong Prime = 1099511628211;
    private ulong _hash;
    private bool _started;

    /// <summary>The digest so far.</summary>
    public readonly ulong Value => _started ? _hash : Offset;

    /// <summary>Adds one value.</summary>
    /// <param name="value">The value.</param>
    public void Add(long value)
    {
        if (!_started)
        {
            _hash = Offset;
            _started = true;
        }

        var v = (ulong)value;
        for (var i = 0; i < 8; i++)
        {
            _hash = (_hash ^ (v & 0xFF)) * Prime;
            v >>= 8;
        }
    }
}
