using System.Reflection;
using System.Runtime.InteropServices;
using BlockDb.Drivers.AdoNet;
using Mono.Data.Sqlite;

namespace BlockDb.SystemData;

/// <summary>What is specific to Mono.Data.Sqlite: its exception type and the native handle behind it.</summary>
internal sealed class SystemDataConnection : AdoNetSqliteConnection
{
    // Mono.Data.Sqlite keeps the sqlite3* in SqliteConnection._sql (SQLite3)._sql (a CriticalHandle);
    // read once per connection to ask sqlite3_get_autocommit, which it has no API for.
    private static readonly FieldInfo ConnectionSql = typeof(SqliteConnection).GetField("_sql", BindingFlags.NonPublic | BindingFlags.Instance)
        ?? throw new MissingFieldException(nameof(SqliteConnection), "_sql");

    private readonly nint _handle;

    public SystemDataConnection(SqliteConnection connection)
        : base(connection)
    {
        var sqlite3 = ConnectionSql.GetValue(connection) ?? throw new InvalidOperationException("Mono.Data.Sqlite connection has no native connection after Open.");
        var handleField = sqlite3.GetType().GetField("_sql", BindingFlags.NonPublic | BindingFlags.Instance)
            ?? throw new MissingFieldException(sqlite3.GetType().Name, "_sql");
        var criticalHandle = (CriticalHandle)(handleField.GetValue(sqlite3) ?? throw new InvalidOperationException("Mono.Data.Sqlite connection has no handle."));
        _handle = (nint)typeof(CriticalHandle).GetField("handle", BindingFlags.NonPublic | BindingFlags.Instance)!.GetValue(criticalHandle)!;
    }

    public override bool InTransaction => SystemDataNative.sqlite3_get_autocommit(_handle) == 0;

    /// <summary>One <c>sqlite3_exec</c> on the native handle: Mono.Data.Sqlite's commands would retry <c>SQLITE_BUSY</c> until their timeout (at least 1 s).</summary>
    public override void ExecuteWithoutRetry(string sql)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(sql);
        ThrowIfDisposed();
        var rc = SystemDataNative.sqlite3_exec(_handle, sql, 0, 0, 0);
        if (rc != 0)
        {
            var message = Marshal.PtrToStringUTF8(SystemDataNative.sqlite3_errmsg(_handle));
            var extended = SystemDataNative.sqlite3_extended_errcode(_handle);
            throw new BlockDbException($"{sql}: {message}", rc & 0xFF, (extended & 0xFF) == (rc & 0xFF) ? extended : rc);
        }
    }

    public static BlockDbException ToBlockDbException(SqliteException e, string what) =>
        new($"{what}: {e.Message}", (int)e.ErrorCode, (int)e.ErrorCode, e);

    /// <summary>Opens <paramref name="connection"/> and wraps it (a failure becomes a <see cref="BlockDbException"/>).</summary>
    public static SystemDataConnection Open(SqliteConnection connection, string path) =>
        OpenAndWrap(connection, static c => new SystemDataConnection(c), static (e, what) => e is SqliteException s ? ToBlockDbException(s, what) : null, path);

    protected override BlockDbException? Translate(Exception exception, string what) =>
        exception is SqliteException e ? ToBlockDbException(e, what) : null;
}
