using BlockDb.Drivers;
using BlockDb.MicrosoftData.Borrowed;
using Microsoft.Data.Sqlite;
using OpenMode = BlockDb.Drivers.SqliteOpenMode;

namespace BlockDb.MicrosoftData;

/// <summary>
/// The Microsoft.Data.Sqlite provider (<c>MicrosoftData</c>). Microsoft.Data.Sqlite opens and closes the connections
/// (pooling off, so a disposed session closes its <c>sqlite3*</c> handle and a disposed database releases its file at
/// once); BlockDb's statements run on that handle through BlockDb's connection core (prepared, bound, stepped, read and
/// finalized by direct calls into the same <c>e_sqlite3</c>), not through <c>SqliteCommand</c> and <c>SqliteDataReader</c>,
/// whose per-statement objects cost more than SQLite's own work on a lookup (issue 25).
/// </summary>
/// <remarks>
/// On <c>SQLITE_BUSY</c> or <c>SQLITE_LOCKED</c> a statement's first step is retried every 150 ms, as Microsoft.Data.Sqlite's
/// commands do, until the configured <c>busy_timeout</c> rounded up to whole seconds (at least 1 s) has passed, so a lock
/// held elsewhere surfaces after about <c>max(busy_timeout, 1 s)</c>, with SQLite's result codes
/// (<see cref="BlockDbException"/>).
/// </remarks>
public sealed class MicrosoftDataDriver : ISqliteDriver
{
    /// <summary>The provider name in configuration: <c>MicrosoftData</c>.</summary>
    public const string ProviderName = "MicrosoftData";

    private MicrosoftDataDriver()
    {
    }

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

    /// <summary>
    /// Lends BlockDb a connection the caller opened and keeps: BlockDb's statements then run on its <c>sqlite3*</c> (as
    /// on BlockDb's own connections), inside whatever transaction the caller has open (Duplicati's always-open one included, also
    /// after the caller commits and begins a new one), and see the caller's uncommitted rows. Nothing is committed or
    /// rolled back but by the caller: text that begins or ends a transaction (<c>BEGIN</c>, <c>COMMIT</c>, <c>END</c>,
    /// <c>ROLLBACK</c> without <c>TO</c>) is refused with <see cref="InvalidOperationException"/>, and <c>SAVEPOINT</c>,
    /// <c>RELEASE</c> and <c>ROLLBACK TO</c> run only while the caller's transaction is open.
    /// </summary>
    /// <param name="connection">An open connection; the caller keeps ownership and closes it.</param>
    /// <returns>
    /// A connection whose <see cref="IDisposable.Dispose"/> finalizes only the statements BlockDb prepared on it and never
    /// closes <paramref name="connection"/>. Its <see cref="ISqliteConnection.InTransaction"/> reads
    /// <c>sqlite3_get_autocommit</c> (<see langword="false"/> when the caller has no transaction open) and its
    /// <see cref="ISqliteConnection.FileName"/> <c>sqlite3_db_filename</c>. A SQLite failure throws
    /// <see cref="BlockDbException"/> with SQLite's primary and extended result codes. Not thread-safe: use it only while
    /// nothing else runs on <paramref name="connection"/>.
    /// </returns>
    /// <remarks>
    /// Order: dispose BlockDb (and this), then close the connection. If the caller closes first, BlockDb's statements
    /// are finalized during the close (so SQLite releases the file then) and every later call on the returned connection
    /// or its statements throws <see cref="ObjectDisposedException"/>. SQLITE_BUSY is not retried beyond the connection's
    /// own <c>busy_timeout</c> (Microsoft.Data.Sqlite's command-level retry does not apply to these statements).
    /// See <see href="https://www.sqlite.org/lang_transaction.html"/>.
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="connection"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException"><paramref name="connection"/> is not open.</exception>
    public ISqliteConnection Borrow(SqliteConnection connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        if (connection.State != System.Data.ConnectionState.Open)
        {
            throw new InvalidOperationException($"The connection is {connection.State}; open it before lending it to BlockDb (the caller keeps it open until BlockDb is disposed).");
        }

        return new BorrowedConnection(connection);
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
        };
        return MicrosoftDataConnection.Open(new SqliteConnection(builder.ToString()), options.Path, options.BusyTimeoutMilliseconds);
    }
}
