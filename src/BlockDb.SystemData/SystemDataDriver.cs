using System.Collections.Concurrent;
using System.Data.Common;
using System.Data.SQLite;
using System.Text;
using BlockDb.Drivers;

namespace BlockDb.SystemData;

/// <summary>
/// The System.Data.SQLite provider (<c>SystemData</c>): the <c>System.Data.SQLite</c> package (2.x, managed only),
/// which P/Invokes the <c>e_sqlite3</c> library that <c>SQLitePCLRaw.bundle_e_sqlite3</c> ships, so it runs on the same
/// native SQLite build as the other two SQLite providers. System.Data.SQLite opens and closes the connections; BlockDb's
/// statements run on the <c>sqlite3*</c> it holds, prepared, bound, stepped, read and finalized by direct calls into that
/// <c>e_sqlite3</c>, not through <c>SQLiteCommand</c> and <c>SQLiteDataReader</c>, whose per-call objects cost more than
/// SQLite's own work on a lookup (issue 25).
/// </summary>
/// <remarks>
/// <para>
/// What this driver sets, and why (System.Data.SQLite's connection-string keys,
/// <see href="https://system.data.sqlite.org/home/doc/trunk/www/faq.md"/>):
/// <c>Pooling=False</c>, so a disposed session closes its handle; <c>SetDefaults=False</c>, so opening runs no
/// <c>PRAGMA</c> of System.Data.SQLite's own (a connection starts from the file's and SQLite's state, as with the other
/// providers, and BlockDb's pragmas are applied and read back afterwards); <c>Flags</c> pinned with
/// <c>NoDefaultFlags</c> and <c>NoSharedFlags</c>, so the <c>DefaultFlags_SQLiteConnection</c> setting or
/// <see cref="SQLiteConnection.SharedFlags"/> of the application cannot change how values are bound and read on BlockDb's
/// connections (<c>NoBindFunctions</c>: the application's <c>[SQLiteFunction]</c> classes are not bound to them either);
/// <c>Enlist=False</c>, so an ambient <c>System.Transactions</c> transaction does not open a transaction on them;
/// <c>ToFullPath=False</c>, so the file is the path BlockDb resolved, as given.
/// </para>
/// <para>
/// System.Data.SQLite's commands retry <c>SQLITE_BUSY</c> (random sleeps of up to 150 ms) until their command timeout,
/// which this driver sets to the configured <c>busy_timeout</c> rounded up to whole seconds (at least 1 s); BlockDb's
/// statements keep that: a first step that meets <c>SQLITE_BUSY</c> or <c>SQLITE_LOCKED</c> is tried again every 150 ms
/// until then, and then fails with SQLite's result codes (<see cref="BlockDbException"/>). System.Data.SQLite keeps SQLite's
/// extended result codes off, so a failure's extended code is read from the connection (<c>sqlite3_extended_errcode</c>).
/// Left to itself it installs SQLite's process-wide error log
/// callback at its first connection and searches the application's folder for a native SQLite at every connection;
/// the driver stops both (<see cref="SystemDataSettings"/>).
/// </para>
/// </remarks>
public sealed class SystemDataDriver : ISqliteDriver
{
    /// <summary>The provider name in configuration: <c>SystemData</c>.</summary>
    public const string ProviderName = "SystemData";

    /// <summary>The connection flags of every connection this driver opens (see the class remarks).</summary>
    internal const SQLiteConnectionFlags Flags = SQLiteConnectionFlags.NoBindFunctions;

    // Loaded with the driver, so a missing System.Data.SQLite.dll fails when the provider is looked up (the provider
    // catalog turns that into a BlockDbConfigurationException), not at the first open.
    private static readonly System.Reflection.Assembly Library = typeof(SQLiteConnection).Assembly;

    private static readonly ConcurrentDictionary<(SqliteOpenMode Mode, int Timeout), string> Keys = new();

    private static string? s_nativeLibraryVersion;

    private SystemDataDriver()
    {
    }

    /// <summary>The one instance; the driver holds no state.</summary>
    public static SystemDataDriver Instance { get; } = new();

    /// <inheritdoc />
    public string Name => ProviderName;

    /// <inheritdoc />
    /// <exception cref="BlockDbConfigurationException">The native <c>e_sqlite3</c> library cannot be loaded.</exception>
    public string NativeLibraryVersion
    {
        get
        {
            if (s_nativeLibraryVersion is null)
            {
                SqliteNativeLibrary.Require(ProviderName, Library);
                SystemDataSettings.Apply();
                s_nativeLibraryVersion = SQLiteConnection.SQLiteVersion;
            }

            return s_nativeLibraryVersion;
        }
    }

    /// <inheritdoc />
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is <see langword="null"/>.</exception>
    /// <exception cref="BlockDbConfigurationException">The native <c>e_sqlite3</c> library cannot be loaded.</exception>
    /// <exception cref="BlockDbException">SQLite failed to open the file.</exception>
    public ISqliteConnection Open(SqliteOpenOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        SqliteNativeLibrary.Require(ProviderName, Library);
        SystemDataSettings.Apply();
        return SqliteCloseGuard.Open(options, OpenUnguarded);
    }

    /// <summary>
    /// The connection string for <paramref name="options"/>: the quoted path, then the keys above, built once per open mode
    /// and timeout (System.Data.SQLite's typed builder costs about 70 µs, as much again as its open).
    /// </summary>
    internal static string ConnectionString(SqliteOpenOptions options)
    {
        var timeout = Math.Max(1, (options.BusyTimeoutMilliseconds + 999) / 1000);
        var text = new StringBuilder(options.Path.Length + 200);
        DbConnectionStringBuilder.AppendKeyValuePair(text, "Data Source", options.Path);
        return text.Append(';').Append(Keys.GetOrAdd((options.Mode, timeout), static k => new SQLiteConnectionStringBuilder
        {
            Pooling = false,
            FailIfMissing = k.Mode != SqliteOpenMode.ReadWriteCreate,
            ReadOnly = k.Mode == SqliteOpenMode.ReadOnly,
            DefaultTimeout = k.Timeout,
            SetDefaults = false,
            Flags = Flags,
            NoDefaultFlags = true,
            NoSharedFlags = true,
            Enlist = false,
            ToFullPath = false,
        }.ToString())).ToString();
    }

    private static ISqliteConnection OpenUnguarded(SqliteOpenOptions options) =>
        SystemDataConnection.Open(new SQLiteConnection(ConnectionString(options), parseViaFramework: true), options.Path, options.BusyTimeoutMilliseconds);
}
