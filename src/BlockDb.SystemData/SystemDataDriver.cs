using System.Data.Common;
using System.Globalization;
using System.Runtime.InteropServices;
using BlockDb.Drivers;
using Mono.Data.Sqlite;

namespace BlockDb.SystemData;

/// <summary>
/// The System.Data.SQLite provider (<c>SystemData</c>). System.Data.SQLite's packages do not restore from the
/// registry this project can reach, so it runs on Mono.Data.Sqlite, Mono's port of System.Data.SQLite 1.0.x
/// with the same ADO.NET design. Its <c>sqlite3</c> imports are redirected to the
/// <c>e_sqlite3</c> library SQLitePCLRaw ships, so all three providers run the same native SQLite build.
/// </summary>
/// <remarks>
/// Pooling is off, so a disposed session closes its handle. Like System.Data.SQLite, it retries
/// <c>SQLITE_BUSY</c> on its own until its command timeout, which this driver sets to the configured
/// <c>busy_timeout</c> rounded up to whole seconds (at least 1 s). Its own open-time pragmas
/// (<c>journal_mode=DELETE</c>, <c>synchronous=NORMAL</c>) are switched off, so a connection starts from the
/// file's and SQLite's own state exactly as with the other providers.
/// </remarks>
public sealed class SystemDataDriver : ISqliteDriver
{
    /// <summary>The provider name in configuration: <c>SystemData</c>.</summary>
    public const string ProviderName = "SystemData";

    private static readonly Lazy<nint> NativeLibraryHandle = new(LoadNativeLibrary);

    static SystemDataDriver()
    {
        NativeLibrary.SetDllImportResolver(typeof(SqliteConnection).Assembly, (name, _, _) =>
            name is "sqlite3" or "libsqlite3" ? NativeLibraryHandle.Value : 0);
    }

    private SystemDataDriver()
    {
    }

    /// <summary>The one instance; the driver holds no state.</summary>
    public static SystemDataDriver Instance { get; } = new();

    /// <inheritdoc />
    public string Name => ProviderName;

    /// <inheritdoc />
    public string NativeLibraryVersion => Marshal.PtrToStringUTF8(SystemDataNative.sqlite3_libversion()) ?? "unknown";

    /// <inheritdoc />
    public ISqliteConnection Open(SqliteOpenOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return SqliteCloseGuard.Open(options, OpenUnguarded);
    }

    private static ISqliteConnection OpenUnguarded(SqliteOpenOptions options)
    {
        // Left to itself, Mono.Data.Sqlite's Open runs PRAGMA journal_mode=Delete and synchronous=Normal on every
        // connection (System.Data.SQLite 1.0.x's defaults): that would switch a WAL file back, block on another
        // writer's lock, and fail on read-only files. "Journal Mode=Default" and "Synchronous=Full" make Open leave
        // both alone; BlockDb's own pragmas are applied afterwards, the same way for every provider. Its typed
        // builder refuses "Default", so the generic builder quotes the values.
        var builder = new DbConnectionStringBuilder
        {
            ["Data Source"] = options.Path,
            ["Pooling"] = "False",
            ["FailIfMissing"] = options.Mode == SqliteOpenMode.ReadWriteCreate ? "False" : "True",
            ["Read Only"] = options.Mode == SqliteOpenMode.ReadOnly ? "True" : "False",
            ["Default Timeout"] = Math.Max(1, (options.BusyTimeoutMilliseconds + 999) / 1000).ToString(CultureInfo.InvariantCulture),
            ["Journal Mode"] = "Default",
            ["Synchronous"] = "Full",
        };
        return SystemDataConnection.Open(new SqliteConnection(builder.ToString()), options.Path);
    }

    private static nint LoadNativeLibrary() => NativeLibrary.Load("e_sqlite3", typeof(SystemDataDriver).Assembly, null);
}
