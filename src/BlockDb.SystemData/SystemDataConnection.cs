using System.Data.SQLite;
using System.Reflection;
using System.Runtime.InteropServices;
using BlockDb.Drivers.AdoNet;

namespace BlockDb.SystemData;

/// <summary>What is specific to System.Data.SQLite: its exception type, its result codes, its autocommit state and the native handle behind it.</summary>
internal sealed class SystemDataConnection : AdoNetSqliteConnection
{
    // System.Data.SQLite hands out its sqlite3* only as an opaque CriticalHandle (GetCriticalHandle); CriticalHandle's
    // documented protected field holds the pointer. Read once per connection, for the one sqlite3_exec below.
    private static readonly FieldInfo HandleField = typeof(CriticalHandle).GetField("handle", BindingFlags.NonPublic | BindingFlags.Instance)
        ?? throw new MissingFieldException(nameof(CriticalHandle), "handle");

    private readonly SQLiteConnection _connection;
    private readonly nint _handle;

    public SystemDataConnection(SQLiteConnection connection)
        : base(connection)
    {
        _connection = connection;
        var critical = connection.GetCriticalHandle() as CriticalHandle ?? throw new InvalidOperationException("System.Data.SQLite's connection has no native handle after Open.");
        _handle = (nint)HandleField.GetValue(critical)!;
    }

    public override bool InTransaction => !_connection.AutoCommit;

    public override long LastInsertRowId => _connection.LastInsertRowId;

    /// <summary>One <c>sqlite3_exec</c> on the native handle: System.Data.SQLite's commands would retry <c>SQLITE_BUSY</c> until their timeout (at least 1 s).</summary>
    public override void ExecuteWithoutRetry(string sql)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(sql);
        ThrowIfDisposed();
        var rc = SystemDataNative.sqlite3_exec(_handle, sql, 0, 0, 0);
        if (rc != 0)
        {
            var message = Marshal.PtrToStringUTF8(SystemDataNative.sqlite3_errmsg(_handle));
            var extended = SystemDataNative.sqlite3_extended_errcode(_handle);
            throw new BlockDbException($"{sql}: {message}", rc & 0xFF, (extended & 0xFF) == (rc & 0xFF) ? extended : rc, null);
        }
    }

    /// <summary>
    /// System.Data.SQLite leaves SQLite's extended result codes off, so <see cref="SQLiteException.ResultCode"/> is the
    /// primary code; the extended one is the connection's last error (<c>sqlite3_extended_errcode</c>), taken when it
    /// belongs to that primary code (read in the exception filter, before anything else runs on the connection).
    /// </summary>
    public static BlockDbException ToBlockDbException(SQLiteException e, string what, SQLiteConnection? connection)
    {
        var primary = (int)e.ResultCode & 0xFF;
        var extended = primary;
        if (connection is { State: System.Data.ConnectionState.Open })
        {
            var last = (int)connection.ExtendedResultCode();
            if ((last & 0xFF) == primary)
            {
                extended = last;
            }
        }

        return new BlockDbException($"{what}: {e.Message}", primary, extended, e);
    }

    /// <summary>Opens <paramref name="connection"/> and wraps it (a failure becomes a <see cref="BlockDbException"/>).</summary>
    public static SystemDataConnection Open(SQLiteConnection connection, string path) =>
        OpenAndWrap(connection, static c => new SystemDataConnection(c), static (e, what) => e is SQLiteException s ? ToBlockDbException(s, what, null) : null, path);

    /// <summary>System.Data.SQLite leaves a statement that failed in <c>sqlite3_step</c> un-reset, so binding it again would fail.</summary>
    protected override void ResetAfterFailure(System.Data.Common.DbCommand command)
    {
        try
        {
            ((SQLiteCommand)command).Reset(clearBindings: false, ignoreErrors: true);
        }
        catch (Exception e) when (e is SQLiteException or InvalidOperationException or ObjectDisposedException)
        {
            // The connection is unusable (closed or disposed): the next call reports that, not this cleanup.
        }
    }

    protected override BlockDbException? Translate(Exception exception, string what) =>
        exception is SQLiteException e ? ToBlockDbException(e, what, _connection) : null;
}
