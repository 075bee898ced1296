using BlockDb.Drivers.Native;
using Microsoft.Data.Sqlite;

namespace BlockDb.MicrosoftData;

/// <summary>
/// A connection the driver opened with Microsoft.Data.Sqlite and owns. Microsoft.Data.Sqlite opens it (the connection
/// string: file, mode, pooling off) and closes it; BlockDb's statements, pragmas included, run on its <c>sqlite3*</c>
/// through BlockDb's connection core (<see cref="NativeConnection"/>), not through <c>SqliteCommand</c>. What Microsoft.Data.Sqlite's command path
/// guaranteed is kept: failures carry SQLite's primary and extended result codes (<see cref="BlockDbException"/>), and a
/// first step that meets <c>SQLITE_BUSY</c> or <c>SQLITE_LOCKED</c> is retried every 150 ms as its commands did, so a lock
/// held elsewhere surfaces after about <c>max(busy_timeout, 1 s)</c> (rounded up to whole seconds).
/// </summary>
internal sealed class MicrosoftDataConnection : NativeConnection
{
    private readonly SqliteConnection _connection;

    private MicrosoftDataConnection(SqliteConnection connection, string path, int busyRetryMilliseconds)
        : base(Pointer(connection.Handle ?? throw new InvalidOperationException("Microsoft.Data.Sqlite's connection has no SQLite handle after Open.")), path, busyRetryMilliseconds)
    {
        _connection = connection;
    }

    /// <summary>Finalizes BlockDb's statements, then closes the connection (<c>sqlite3_close_v2</c>, through Microsoft.Data.Sqlite).</summary>
    public override void Dispose()
    {
        if (Release("the connection was disposed"))
        {
            _connection.Dispose();
        }
    }

    /// <summary>The <c>sqlite3*</c> of SQLitePCL's handle, valid while Microsoft.Data.Sqlite keeps the connection open.</summary>
    internal static nint Pointer(SQLitePCL.sqlite3 handle) => handle.DangerousGetHandle();

    /// <summary>
    /// Opens <paramref name="connection"/> and wraps it; a failure becomes a <see cref="BlockDbException"/>.
    /// </summary>
    /// <param name="connection">Not yet open.</param>
    /// <param name="path">The file, for the message.</param>
    /// <param name="busyTimeoutMilliseconds">The configured <c>busy_timeout</c>: with it, the retry of a busy first step ends about <c>max(busy_timeout, 1 s)</c> (whole seconds) after the step began, as Microsoft.Data.Sqlite's command timeout did.</param>
    public static MicrosoftDataConnection Open(SqliteConnection connection, string path, int busyTimeoutMilliseconds) =>
        OpenAndWrap(
            connection,
            path,
            () => new MicrosoftDataConnection(connection, path, BusyRetryAfterHandler(busyTimeoutMilliseconds)),
            static e => e is SqliteException s ? (s.SqliteErrorCode, s.SqliteExtendedErrorCode) : null);
}
