using System.Runtime.InteropServices;

namespace BlockDb.PInvoke;

/// <summary>
/// Owns one <c>sqlite3*</c>. Releasing it calls <c>sqlite3_close_v2</c>, which defers the close until every
/// statement of the connection is finalized, so the finalizer order of connection and statements does not matter.
/// </summary>
internal sealed class SqliteConnectionHandle : SafeHandle
{
    internal SqliteConnectionHandle(nint db)
        : base(0, ownsHandle: true)
    {
        SetHandle(db);
    }

    public override bool IsInvalid => handle == 0;

    protected override bool ReleaseHandle() => NativeMethods.sqlite3_close_v2(handle) == NativeMethods.SQLITE_OK;
}

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

    /// <summary>The native UTF-8 buffer of each parameter (slot = index - 1), or 0 when it has none yet.</summary>
    internal nint[] Buffers { get; }

    /// <summary>The byte capacity of each buffer in <see cref="Buffers"/>.</summary>
    internal int[] Capacities { get; }

    public override bool IsInvalid => handle == 0;

    protected override bool ReleaseHandle()
    {
        // Finalize's result repeats the statement's last error, which was reported when it happened.
        _ = NativeMethods.sqlite3_finalize(handle);
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
