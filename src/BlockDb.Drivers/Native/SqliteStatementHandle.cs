using System.Runtime.InteropServices;

namespace BlockDb.Drivers.Native;

/// <summary>
/// Owns one <c>sqlite3_stmt*</c> and the native buffers its text parameters are bound from
/// (<c>SQLITE_STATIC</c>). Releasing it finalizes the statement first and frees the buffers after, so SQLite
/// never sees a freed buffer, even when the owner was never disposed.
/// </summary>
internal sealed unsafe class SqliteStatementHandle : SafeHandle
{
    internal SqliteStatementHandle(nint stmt, int parameterCount)
        : base(0, ownsHandle: true)
    {
        SetHandle(stmt);
        Buffers = new nint[parameterCount];
        Capacities = new int[parameterCount];
    }

    /// <summary>Small strings get a buffer of their worst-case UTF-8 size, so later binds skip the byte count.</summary>
    internal const int WorstCaseBufferLimit = 1024;

    private const int MinimumBufferSize = 16;

    /// <summary>The native UTF-8 buffer of each parameter (slot = index - 1), or 0 when it has none yet.</summary>
    internal nint[] Buffers { get; }

    /// <summary>The byte capacity of each buffer in <see cref="Buffers"/>.</summary>
    internal int[] Capacities { get; }

    /// <summary>A new native buffer of at least <paramref name="needed"/> bytes for a bind; the slot keeps its old one until <see cref="Adopt"/>.</summary>
    internal static (nint Buffer, int Capacity) Reserve(int needed, int preferred)
    {
        var capacity = Math.Max(MinimumBufferSize, Math.Max(needed, preferred));
        return ((nint)NativeMemory.Alloc((nuint)capacity), capacity);
    }

    /// <summary>After a bind: the statement points at <paramref name="buffer"/>, so the slot owns it and the buffer it replaced is freed.</summary>
    internal void Adopt(int slot, nint buffer, int capacity)
    {
        var old = Buffers[slot];
        if (buffer == old)
        {
            return;
        }

        Buffers[slot] = buffer;
        Capacities[slot] = capacity;
        if (old != 0)
        {
            NativeMemory.Free((void*)old);
        }
    }

    public override bool IsInvalid => handle == 0;

    protected override bool ReleaseHandle()
    {
        // Finalize's result repeats the statement's last error, which was reported when it happened.
        _ = SqliteNative.sqlite3_finalize(handle);
        for (var i = 0; i < Buffers.Length; i++)
        {
            if (Buffers[i] != 0)
            {
                NativeMemory.Free((void*)Buffers[i]);
                Buffers[i] = 0;
                Capacities[i] = 0;
            }
        }

        return true;
    }
}
