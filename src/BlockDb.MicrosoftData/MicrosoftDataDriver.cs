using BlockDb.Drivers;
using Microsoft.Data.Sqlite;
using OpenMode = BlockDb.Drivers.SqliteOpenMode;

namespace BlockDb.MicrosoftData;

/// <summary>
/// The Microsoft.Data.Sqlite provider (<c>MicrosoftData</c>). Connections are opened with pooling off, so a
/// disposed session closes its <c>sqlite3*</c> handle and a disposed database releases its file at once
/// (Microsoft.Data.Sqlite pools by default and would keep the file open until the pool is cleared).
/// </summary>
/// <remarks>
/// On <c>SQLITE_BUSY</c>, Microsoft.Data.Sqlite retries on its own until the command timeout; this driver sets
/// that timeout to the configured <c>busy_timeout</c> rounded up to whole seconds (at least 1 s), so a lock held
/// elsewhere surfaces after about <c>max(busy_timeout, 1 s)</c>.
/// </remarks>
public sealed class MicrosoftDataDriver : ISqliteDriver
{
    /// <summary>The provider name in configuration: <c>MicrosoftData</c>.</summary>
    public const string ProviderName = "MicrosoftData";

    /// <summary>The one instance; the driver holds no state.</summary>
    public static MicrosoftDataDriver Instance { get; } = new();

    /// <inheritdoc />
    public string Name => ProviderName;

    /// <inheritdoc />
    /// <exception cref="BlockDbConfigurationException">The native <c>e_sqlite3</c> library cannot be loaded.</exception>
    public string NativeLibraryVersion
    {
        get
        {
            SqliteNativeLibrary.Require(ProviderName, typeof(SQLitePCL.raw).Assembly);
            SQLitePCL.Batteries_V2.Init();
            return SQLitePCL.raw.sqlite3_libversion().utf8_to_string();
        }
    }

    /// <inheritdoc />
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is <see langword="null"/>.</exception>
    /// <exception cref="BlockDbConfigurationException">The native <c>e_sqlite3</c> library cannot be loaded.</exception>
    /// <exception cref="BlockDbException">SQLite failed to open the file.</exception>
    public ISqliteConnection Open(SqliteOpenOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        SqliteNativeLibrary.Require(ProviderName, typeof(SQLitePCL.raw).Assembly);
        return SqliteCloseGuard.Open(options, OpenUnguarded);
    }

    private static ISqliteConnection OpenUnguarded(SqliteOpenOptions options)
    {
        var builder = new SqliteConnectionStringBuilder
        {
            DataSource = options.Path,
            Mode = options.Mode switch
            {
                OpenMode.ReadWrite => Microsoft.Data.Sqlite.SqliteOpenMode.ReadWrite,
                OpenMode.ReadOnly => Microsoft.Data.Sqlite.SqliteOpenMode.ReadOnly,
                _ => Microsoft.Data.Sqlite.SqliteOpenMode.ReadWriteCreate,
            },
            Pooling = false,
            DefaultTimeout = Math.Max(1, (options.BusyTimeoutMilliseconds + 999) / 1000),
        };
        return MicrosoftDataConnection.Open(new SqliteConnection(builder.ToString()), options.Path);
    }
}
