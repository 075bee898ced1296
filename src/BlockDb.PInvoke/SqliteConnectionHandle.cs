using System.Runtime.InteropServices;
using BlockDb.Drivers.Native;

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

    protected override bool ReleaseHandle() => SqliteNative.sqlite3_close_v2(handle) == SqliteNative.SQLITE_OK;
}
