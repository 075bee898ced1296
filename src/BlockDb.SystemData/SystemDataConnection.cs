using System.Data.SQLite;
using System.Reflection;
using System.Runtime.InteropServices;
using BlockDb.Drivers.Native;

namespace BlockDb.SystemData;

/// <summary>
/// A connection System.Data.SQLite opened (the connection string: file, mode, pooling off, its own defaults off) and
/// closes; BlockDb's statements, pragmas included, run on its <c>sqlite3*</c> through BlockDb's connection core
/// (<see cref="NativeConnection"/>), not through <c>SQLiteCommand</c> and <c>SQLiteDataReader</c>, whose per-call work
/// (a reader, boxed parameters, type checks) was about 11,000 of the 18,115 instructions of a find (issue 25).
/// System.Data.SQLite 2.x binds the same <c>e_sqlite3</c> (its <c>DllImport("e_sqlite3")</c>), so its handle is valid for
/// the core's calls. Its connection's own state stays coherent: <c>AutoCommit</c> and <c>LastInsertRowId</c> read the same
/// handle, BlockDb prepares none of its commands, and the <c>busy_timeout</c> BlockDb sets is the handle's. Its commands'
/// busy retry (random sleeps up to 150 ms until the command timeout: <c>busy_timeout</c> rounded up to whole seconds, at
/// least 1 s) is kept as the core's retry of a busy first step (<see cref="NativeConnection.RetryIfBusy"/>).
/// </summary>
internal sealed class SystemDataConnection : NativeConnection
{
    // System.Data.SQLite hands out its sqlite3* only as an opaque CriticalHandle (GetCriticalHandle); CriticalHandle's
    // documented protected field holds the pointer. Read once per connection.
    private static readonly FieldInfo HandleField = typeof(CriticalHandle).GetField("handle", BindingFlags.NonPublic | BindingFlags.Instance)
        ?? throw new MissingFieldException(nameof(CriticalHandle), "handle");

    private readonly SQLiteConnection _connection;

    private SystemDataConnection(SQLiteConnection connection, string path, int busyRetryMilliseconds)
        : base(Pointer(connection), path, busyRetryMilliseconds)
    {
        _connection = connection;
    }

    /// <summary>Finalizes BlockDb's statements, then closes the connection through System.Data.SQLite.</summary>
    public override void Dispose()
    {
        if (Release("the connection was disposed"))
        {
            _connection.Dispose();
        }
    }

    /// <summary>
    /// Opens <paramref name="connection"/> and wraps it; a failure becomes a <see cref="BlockDbException"/>.
    /// </summary>
    /// <param name="connection">Not yet open.</param>
    /// <param name="path">The file, for messages.</param>
    /// <param name="busyTimeoutMilliseconds">The configured <c>busy_timeout</c>: the retry of a busy first step ends about <c>max(busy_timeout, 1 s)</c> (whole seconds) after the step began, as System.Data.SQLite's command timeout did.</param>
    public static SystemDataConnection Open(SQLiteConnection connection, string path, int busyTimeoutMilliseconds) =>
        OpenAndWrap(
            connection,
            path,
            () => new SystemDataConnection(connection, path, BusyRetryAfterHandler(busyTimeoutMilliseconds)),
            // System.Data.SQLite keeps extended result codes off, so ResultCode is the primary code.
            static e => e is SQLiteException s ? ((int)s.ResultCode & 0xFF, (int)s.ResultCode & 0xFF) : null);

    private static nint Pointer(SQLiteConnection connection)
    {
        var critical = connection.GetCriticalHandle() as CriticalHandle ?? throw new InvalidOperationException("System.Data.SQLite's connection has no native handle after Open.");
        var db = (nint)HandleField.GetValue(critical)!;
        return db != 0 ? db : throw new InvalidOperationException("System.Data.SQLite's connection has no native handle after Open.");
    }
}
