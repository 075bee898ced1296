using BlockDb.Drivers;
using BlockDb.Opening;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace BlockDb;

/// <summary>
/// Builds an open block index, in the way of Npgsql's <c>NpgsqlDataSourceBuilder</c>: start from the options, choose a
/// SQLite driver in code if needed (<see cref="UseSqliteDriver"/>; otherwise <see cref="BlockDbOptions.Provider"/> names
/// the provider), then <see cref="Build"/> validates the options once, freezes a copy, chooses the engine and opens
/// the database. Nothing changed on the builder or the options afterwards changes a database already built. Not
/// thread-safe; the database it builds is. <see cref="BlockDatabase.Open"/> is the one-line form; <c>AddBlockDb</c>
/// registers the same build with dependency injection.
/// </summary>
/// <example>
/// <code>
/// await using var db = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = "index.db" })
///     .UseSqliteDriver(PInvokeDriver.Instance)
///     .Build();
/// </code>
/// </example>
public sealed class BlockDatabaseBuilder
{
    private readonly List<IEngineProvider> _registered = [];
    private ILoggerFactory _loggerFactory = NullLoggerFactory.Instance;
    private IServiceProvider? _services;
    private ILentSqliteConnection? _caller;

    /// <summary>Starts from a copy of <paramref name="options"/> (later changes to <paramref name="options"/> are not seen).</summary>
    /// <param name="options">The options to start from.</param>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    public BlockDatabaseBuilder(BlockDbOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Options = options.Clone();
    }

    /// <summary>The builder's own options, to change before <see cref="Build"/>.</summary>
    public BlockDbOptions Options { get; }

    /// <summary>
    /// Opens the database with this SQLite driver: sets <see cref="BlockDbOptions.Provider"/> to its
    /// <see cref="ISqliteDriver.Name"/>, so a driver of one's own (a wrapper that traces or counts) can be used as well
    /// as BlockDb's (<c>PInvokeDriver.Instance</c>, ...). The last choice wins: a later <see cref="BlockDbOptions.Provider"/>
    /// naming another provider opens that one.
    /// </summary>
    /// <param name="driver">The driver, for example <c>PInvokeDriver.Instance</c>.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="driver"/> is null.</exception>
    /// <exception cref="ArgumentException">The driver's <see cref="ISqliteDriver.Name"/> is empty.</exception>
    public BlockDatabaseBuilder UseSqliteDriver(ISqliteDriver driver)
    {
        ArgumentNullException.ThrowIfNull(driver);
        if (string.IsNullOrWhiteSpace(driver.Name))
        {
            throw new ArgumentException($"The SQLite driver {driver.GetType().FullName} has no name; BlockDb:Provider chooses a driver by its name.", nameof(driver));
        }

        _registered.Add(ProviderCatalog.Wrap(driver));
        Options.Provider = driver.Name;
        return this;
    }

    /// <summary>
    /// Runs the database on a connection and transaction the caller owns (External mode), such as Duplicati's one
    /// Microsoft.Data.Sqlite connection with its always-open transaction: BlockDb's rows commit and roll back with the
    /// caller's, BlockDb never begins, commits or rolls back (X1), needs the caller's transaction open at every call
    /// (X2), and opens no connection of its own to the file (X3). Each call's writes go in a savepoint released before
    /// the call returns. The caller disposes BlockDb before closing its connection.
    /// </summary>
    /// <param name="connection">The caller's open connection, lent by <c>MicrosoftDataDriver.Instance.Borrow(sqliteConnection)</c>; the built database ends the loan when disposed (the connection stays open).</param>
    /// <returns>This builder.</returns>
    /// <remarks>
    /// <see cref="Build"/> then refuses, with <see cref="BlockDbConfigurationException"/> naming the key: a
    /// <see cref="BlockDbOptions.Provider"/> other than the connection's, a <see cref="BlockDbOptions.DataSource"/> that is
    /// another file (unset is the connection's file), a connection that is closed or on an in-memory database, any
    /// <see cref="BlockDbOptions.Pragmas"/>, <see cref="BlockDbOptions.Batching"/> or <see cref="BlockDbOptions.GroupCommit"/>
    /// setting changed from its default, and the KeyMap layout (set, or the file's). It throws
    /// <see cref="InvalidOperationException"/> when no transaction is open, and <see cref="BlockDbFormatException"/> for
    /// an empty file or one that needs a schema change (BlockDb makes neither inside the caller's transaction). One
    /// session at a time; <c>CommitAsync</c>/<c>RollbackAsync</c> of the session, <see cref="IBlockDatabase.OpenSharedSession"/>,
    /// the imports and <see cref="IBlockDatabase.RepairAsync"/> are refused. <see cref="IBlockSession.PendingWrites"/> is 0.
    /// See docs/ARCHITECTURE.md, "External mode".
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="connection"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="connection"/> was not lent by a BlockDb driver (<c>Borrow</c>).</exception>
    public BlockDatabaseBuilder UseCallerConnection(ISqliteConnection connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        _caller = connection as ILentSqliteConnection ?? throw new ArgumentException(
            "UseCallerConnection takes a caller's connection lent to BlockDb: MicrosoftDataDriver.Instance.Borrow(sqliteConnection). A connection BlockDb opened is its own, not the caller's.",
            nameof(connection));
        return this;
    }

    /// <summary>Makes a provider registered through dependency injection (a SQLite driver, BlockDb.PostgreSql's engine) available to <see cref="BlockDbOptions.Provider"/> by its name, without choosing it.</summary>
    internal BlockDatabaseBuilder AddRegisteredProvider(IEngineProvider provider)
    {
        _registered.Add(provider);
        return this;
    }

    /// <summary>Where the database logs (the applied pragmas, upgrades, repairs, warnings); none when <see langword="null"/>.</summary>
    /// <param name="loggerFactory">The logger factory.</param>
    /// <returns>This builder.</returns>
    public BlockDatabaseBuilder UseLoggerFactory(ILoggerFactory? loggerFactory)
    {
        _loggerFactory = loggerFactory ?? NullLoggerFactory.Instance;
        return this;
    }

    /// <summary>The application's services, for providers that take what they need from them (a registered data source).</summary>
    /// <param name="services">The service provider, or <see langword="null"/>.</param>
    /// <returns>This builder.</returns>
    public BlockDatabaseBuilder UseServices(IServiceProvider? services)
    {
        _services = services;
        return this;
    }

    /// <summary>Validates a frozen copy of the options and returns the provider they name, without opening anything.</summary>
    /// <returns>The frozen options (their <see cref="BlockDbOptions.Provider"/> set to the chosen provider's name) and the provider.</returns>
    /// <exception cref="BlockDbConfigurationException">A setting is invalid, the provider is unknown or not installed, or the provider refuses a setting.</exception>
    internal (BlockDbOptions Options, IEngineProvider Provider) Resolve()
    {
        var frozen = Options.Clone();
        frozen.Validate();
        var provider = ProviderCatalog.Find(frozen.Provider, _registered);
        frozen.Provider = provider.Name;
        provider.Validate(frozen);
        return (frozen, provider);
    }

    /// <summary>Validates the options once, freezes a copy and opens the database through the provider they name.</summary>
    /// <returns>The open database, which the caller disposes.</returns>
    /// <exception cref="BlockDbConfigurationException">A setting is invalid, the provider is unknown or not installed (the message says which package to add), or the provider or the file's layout refuses a setting.</exception>
    /// <exception cref="BlockDbFormatException">The file belongs to another application or a newer BlockDb, has another layout than <see cref="IndexOptions.Layout"/> asks for, or (<see cref="BlockDbOptions.ReadOnly"/>) is empty or needs a schema upgrade.</exception>
    /// <exception cref="InvalidOperationException">On a caller's connection (<see cref="UseCallerConnection"/>): no transaction is open on it.</exception>
    /// <exception cref="BlockDbException">The database could not be opened: for SQLite, <c>SQLITE_CANTOPEN</c> for a missing folder or, read-only, a missing file; <c>SQLITE_NOTADB</c> for a file that is not a database; <c>SQLITE_READONLY</c> for a read-only file; <c>SQLITE_BUSY</c> when creating or upgrading the schema waited longer than <c>busy_timeout</c> for the write lock; or a pragma did not take effect.</exception>
    public IBlockDatabase Build()
    {
        if (_caller is not null)
        {
            return BuildOnCallerConnection(_caller);
        }

        var (options, provider) = Resolve();
        return provider.Open(new BlockDbProviderContext(options, _loggerFactory, _services));
    }

    /// <summary>Validates a frozen copy of the options against the caller's connection and opens the database on it (External mode).</summary>
    private IBlockDatabase BuildOnCallerConnection(ILentSqliteConnection connection)
    {
        var options = Options.Clone();
        options.Validate();
        var path = CallerOptions.Validate(options, connection);
        options.Provider = connection.Driver.Name;
        options.DataSource = path;
        return new Sqlite.SqliteDatabase(options, connection.Driver, path, _loggerFactory.CreateLogger<Sqlite.SqliteDatabase>(), new Sqlite.CallerConnection(connection));
    }
}
