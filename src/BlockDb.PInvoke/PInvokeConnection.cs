using BlockDb.Drivers.Native;

namespace BlockDb.PInvoke;

/// <summary>
/// A connection PInvoke opened itself (<c>sqlite3_open_v2</c>, <see cref="Open"/>) on BlockDb's connection core
/// (<see cref="NativeConnection"/>). Its <c>sqlite3*</c> is owned by a <see cref="SqliteConnectionHandle"/>, so it is
/// closed even when the caller forgets to dispose. No busy retry beyond SQLite's own <c>busy_timeout</c>.
/// </summary>
internal sealed partial class PInvokeConnection : NativeConnection
{
    private readonly SqliteConnectionHandle _handle;

    private PInvokeConnection(SqliteConnectionHandle handle, string path)
        : base(handle.DangerousGetHandle(), path, busyRetryMilliseconds: 0)
    {
        _handle = handle;
    }

    /// <summary>Statements first (finalize, then free their buffers), then the connection (<c>sqlite3_close_v2</c>).</summary>
    public override void Dispose()
    {
        if (Release("the connection is disposed"))
        {
            _handle.Dispose();
        }
    }
}
