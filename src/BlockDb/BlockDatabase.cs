using System.Collections.Concurrent;
using BlockDb.Drivers;
using BlockDb.KeyMap;
using BlockDb.Maintenance;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace BlockDb;

/// <summary>
/// An open block index: the thread-safe entry point. <see cref="Open(BlockDbOptions, ILoggerFactory?)"/> validates
/// the options, opens the file through the configured provider, creates or checks the schema
/// (<c>PRAGMA user_version</c>), applies and verifies the pragmas; <see cref="OpenSessionAsync"/> then gives
/// each task its own repository session and connection. Opening an existing file never takes the write lock, so a
/// reader can open beside a writer that holds an open batch.
/// </summary>
public sealed class BlockDatabase : IBlockDatabase
{
    private readonly ISqliteDriver _driver;
    private readonly PragmaSettings _requested;
    private readonly ILogger _logger;
    private readonly BlockKeyMap? _keyMap;
    private readonly ConcurrentDictionary<BlockRepository, byte> _sessions = new();
    private readonly ConcurrentDictionary<SharedBlockRepository, byte> _shared = new();
    private readonly ConcurrentDictionary<Task, byte> _maintenance = new();
    private readonly CancellationTokenSource _closing = new();
    private int _disposed;

    private BlockDatabase(BlockDbOptions options, ISqliteDriver driver, string path, ILogger logger)
    {
        Options = options;
        _driver = driver;
        DataSource = path;
        _logger = logger;
        _requested = options.Pragmas.Resolve();
        try
        {
            using var connection = OpenConnection();
            SqliteVersion = connection.QueryText(BlockDbSql.SqliteVersionQuery) ?? "unknown";
            Layout = Schema.Open(connection, path, options.Index.Layout, options.ReadOnly, _logger);
            _keyMap = Layout == BlockLayout.KeyMap ? new BlockKeyMap(options.Index.KeyMapMemoryLimitMegabytes) : null;
            AppliedPragmas = Pragmas.ApplyAndVerify(connection, _requested, _logger, path, options.ReadOnly);
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.NotADatabase)
        {
            throw new BlockDbException($"'{path}' is not a SQLite database file (SQLITE_NOTADB); BlockDb left it untouched. {e.Message}", e.SqliteErrorCode, e.SqliteExtendedErrorCode, e);
        }

        _logger.LogInformation(
            "Opened BlockDb '{Path}' ({Layout} layout) with provider {Provider} on SQLite {Version}; pragmas: {Pragmas}",
            path, Layout, driver.Name, SqliteVersion, AppliedPragmas);
    }

    /// <inheritdoc />
    public string ProviderName => _driver.Name;

    /// <inheritdoc />
    public string SqliteVersion { get; }

    /// <inheritdoc />
    public string DataSource { get; }

    /// <inheritdoc />
    public PragmaSettings AppliedPragmas { get; }

    /// <inheritdoc />
    public BlockDbOptions Options { get; }

    /// <inheritdoc />
    public BlockLayout Layout { get; }

    /// <inheritdoc />
    public (long Blocks, long Bytes) KeyMapUsage => _keyMap is null ? (0, 0) : (_keyMap.Count, _keyMap.MemoryBytes);

    /// <summary>Opens a block index with the provider named in <paramref name="options"/>.</summary>
    /// <param name="options">The options; validated, then used as given (do not change them afterwards).</param>
    /// <param name="loggerFactory">Where the applied pragmas and warnings are logged; none when <see langword="null"/>.</param>
    /// <returns>The open database.</returns>
    /// <exception cref="BlockDbConfigurationException">An option is invalid or names an unknown provider.</exception>
    /// <exception cref="BlockDbFormatException">The file belongs to another application or a newer BlockDb, has another layout than <see cref="IndexOptions.Layout"/> asks for, or (<see cref="BlockDbOptions.ReadOnly"/>) is empty or needs a schema upgrade.</exception>
    /// <exception cref="BlockDbException">SQLite could not open the file (<c>SQLITE_CANTOPEN</c> for a missing folder or, read-only, a missing file; <c>SQLITE_NOTADB</c> for a file that is not a database; <c>SQLITE_READONLY</c> for a read-only file), creating or upgrading the schema waited longer than <c>busy_timeout</c> for the write lock (<c>SQLITE_BUSY</c>), or a pragma did not take effect.</exception>
    public static BlockDatabase Open(BlockDbOptions options, ILoggerFactory? loggerFactory = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return Open(options, BlockDbProviders.Get(options.Provider), loggerFactory);
    }

    /// <summary>Opens a block index through a given driver (the provider named in the options is ignored).</summary>
    /// <param name="options">The options.</param>
    /// <param name="driver">The driver to use.</param>
    /// <param name="loggerFactory">Where the applied pragmas and warnings are logged; none when <see langword="null"/>.</param>
    /// <returns>The open database.</returns>
    /// <exception cref="BlockDbConfigurationException">An option is invalid.</exception>
    /// <exception cref="BlockDbFormatException">The file belongs to another application or a newer BlockDb, or has another layout than <see cref="IndexOptions.Layout"/> asks for.</exception>
    /// <exception cref="BlockDbException">SQLite could not open or configure the file.</exception>
    public static BlockDatabase Open(BlockDbOptions options, ISqliteDriver driver, ILoggerFactory? loggerFactory = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(driver);
        options.Validate();
        var path = Path.GetFullPath(options.DataSource!);
        var folder = Path.GetDirectoryName(path);
        if (folder is not null && !Directory.Exists(folder))
        {
            throw new BlockDbException(
                $"Cannot open '{path}': the folder '{folder}' does not exist; create it first (BlockDb creates the file, not its folder).",
                SqliteResultCode.CantOpen, SqliteResultCode.CantOpen);
        }

        if (Directory.Exists(path))
        {
            throw new BlockDbException($"Cannot open '{path}': it is a folder, not a database file.", SqliteResultCode.CantOpen, SqliteResultCode.CantOpen);
        }

        var logger = (loggerFactory ?? NullLoggerFactory.Instance).CreateLogger<BlockDatabase>();
        return new BlockDatabase(options, driver, path, logger);
    }

    /// <summary>Opens a block index (see <see cref="Open(BlockDbOptions, ILoggerFactory?)"/>). Completes synchronously: SQLite opens files synchronously.</summary>
    /// <param name="options">The options.</param>
    /// <param name="loggerFactory">Where the applied pragmas and warnings are logged.</param>
    /// <param name="cancellationToken">Cancels before the file is opened.</param>
    /// <returns>The open database.</returns>
    /// <exception cref="BlockDbConfigurationException">An option is invalid or names an unknown provider.</exception>
    /// <exception cref="BlockDbException">SQLite could not open or configure the file.</exception>
    public static ValueTask<BlockDatabase> OpenAsync(BlockDbOptions options, ILoggerFactory? loggerFactory = null, CancellationToken cancellationToken = default)
    {
        try
        {
            cancellationToken.ThrowIfCancellationRequested();
            return new(Open(options, loggerFactory));
        }
        catch (Exception e)
        {
            return ValueTask.FromException<BlockDatabase>(e);
        }
    }

    /// <inheritdoc />
    public ValueTask<IBlockRepository> OpenSessionAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            cancellationToken.ThrowIfCancellationRequested();
            return new(OpenSession());
        }
        catch (Exception e)
        {
            return ValueTask.FromException<IBlockRepository>(e);
        }
    }

    /// <summary>Opens a repository session synchronously (see <see cref="OpenSessionAsync"/>).</summary>
    /// <returns>A session the caller disposes.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbException">SQLite failed to open or configure the connection.</exception>
    public IBlockRepository OpenSession() => OpenSession(Options.Batching);

    /// <inheritdoc />
    public ISharedBlockRepository OpenSharedRepository()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        var shared = new SharedBlockRepository(this, Options.GroupCommit, s => _shared.TryRemove(s, out _));
        _shared.TryAdd(shared, 0);
        if (Volatile.Read(ref _disposed) != 0)
        {
            shared.Dispose();
            throw new ObjectDisposedException(nameof(BlockDatabase), "The BlockDb database was disposed while the shared repository was opening.");
        }

        return shared;
    }

    /// <inheritdoc />
    public ValueTask<BlockDbCheckResult> CheckAsync(CancellationToken cancellationToken = default) =>
        RunMaintenance(
            token =>
            {
                using var connection = OpenConfiguredConnection();
                return IndexChecker.Check(connection, Layout, _keyMap, token);
            },
            cancellationToken);

    /// <inheritdoc />
    public ValueTask<BlockDbRepairResult> RepairAsync(CancellationToken cancellationToken = default)
    {
        if (Options.ReadOnly)
        {
            return ValueTask.FromException<BlockDbRepairResult>(new BlockDbReadOnlyException(nameof(RepairAsync), DataSource));
        }

        return RunMaintenance(
            token =>
            {
                // No busy wait: a repair beside another writer is refused at once (providers that retry BUSY on their own wait their minimum).
                using var connection = OpenConfiguredConnection(busyTimeoutMilliseconds: 0);
                return IndexChecker.Repair(connection, Layout, _keyMap, _logger, DataSource, token);
            },
            cancellationToken);
    }

    /// <summary>
    /// Runs a check or repair on a connection of its own, off the caller's thread, registered so that disposing the
    /// database cancels it and waits for it (it stops between its steps; a repair then rolls back).
    /// </summary>
    private ValueTask<T> RunMaintenance<T>(Func<CancellationToken, T> work, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _closing.Token);
        var task = Task.Run(() => work(linked.Token), linked.Token);
        _maintenance.TryAdd(task, 0);
        _ = task.ContinueWith(
            t =>
            {
                _maintenance.TryRemove(t, out _);
                linked.Dispose();
            },
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
        if (Volatile.Read(ref _disposed) != 0)
        {
            linked.Cancel(); // disposed while starting: the dispose may not have seen it
        }

        return new(task);
    }

    /// <summary>
    /// Opens a session with its own batching (the shared repository's writer commits only when told). A session of a
    /// shared repository (<paramref name="register"/> false) is owned and disposed by it, so the database's dispose
    /// never disposes it under the repository's running writer loop.
    /// </summary>
    internal BlockRepository OpenSession(BatchingOptions batching, bool register = true)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        var connection = OpenConnection();
        BlockRepository session;
        try
        {
            var applied = Pragmas.ApplyAndVerify(connection, _requested, _logger, DataSource, Options.ReadOnly);
            var settings = new SessionSettings(DataSource, Layout, _keyMap, batching, Options.SelectXorInsert, Options.ReadOnly, applied);
            session = new BlockRepository(connection, settings, s => _sessions.TryRemove(s, out _));
        }
        catch
        {
            connection.Dispose();
            throw;
        }

        if (!register)
        {
            return session;
        }

        _sessions.TryAdd(session, 0);
        if (Volatile.Read(ref _disposed) != 0)
        {
            // The database was disposed while this session opened: its dispose may not have seen it.
            session.Dispose();
            throw new ObjectDisposedException(nameof(BlockDatabase), "The BlockDb database was disposed while the session was opening.");
        }

        return session;
    }

    /// <summary>
    /// Disposes the shared repositories (their queued writes commit first, their reads in flight finish) and the
    /// sessions still open (each waits for a call in flight, then commits or rolls back as
    /// <see cref="BatchingOptions.OnDispose"/> says); the file is then released. Calls made afterwards throw
    /// <see cref="ObjectDisposedException"/>.
    /// </summary>
    /// <exception cref="AggregateException">Ending a session's batch failed (its connection is closed all the same).</exception>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _closing.Cancel();
        WaitForMaintenance().GetAwaiter().GetResult();
        List<Exception>? errors = null;
        foreach (var disposable in _shared.Keys.Cast<IDisposable>().Concat(_sessions.Keys))
        {
            try
            {
                disposable.Dispose();
            }
            catch (Exception e)
            {
                (errors ??= []).Add(e);
            }
        }

        ThrowIfAny(errors);
    }

    /// <inheritdoc cref="Dispose"/>
    /// <returns>A task that completes once every call in flight has finished and every connection is closed.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _closing.CancelAsync().ConfigureAwait(false);
        await WaitForMaintenance().ConfigureAwait(false);
        List<Exception>? errors = null;
        foreach (var disposable in _shared.Keys.Cast<IAsyncDisposable>().Concat(_sessions.Keys))
        {
            try
            {
                await disposable.DisposeAsync().ConfigureAwait(false);
            }
            catch (Exception e)
            {
                (errors ??= []).Add(e);
            }
        }

        ThrowIfAny(errors);
    }

    /// <summary>Waits for running checks and repairs (their own failures, cancellation included, go to their callers).</summary>
    private async Task WaitForMaintenance()
    {
        var running = _maintenance.Keys.ToArray();
        if (running.Length > 0)
        {
            await Task.WhenAll(running).ContinueWith(static _ => { }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).ConfigureAwait(false);
        }
    }

    private static void ThrowIfAny(List<Exception>? errors)
    {
        if (errors is not null)
        {
            throw new AggregateException("Disposing the open BlockDb sessions failed.", errors);
        }
    }

    /// <summary>A connection with the pragmas applied (for the check and the repair).</summary>
    private ISqliteConnection OpenConfiguredConnection(int? busyTimeoutMilliseconds = null)
    {
        var connection = OpenConnection(busyTimeoutMilliseconds);
        try
        {
            Pragmas.ApplyAndVerify(connection, _requested, _logger, DataSource, Options.ReadOnly);
            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    private ISqliteConnection OpenConnection(int? busyTimeoutMilliseconds = null)
    {
        var mode = Options.ReadOnly ? SqliteOpenMode.ReadOnly : SqliteOpenMode.ReadWriteCreate;
        var connection = _driver.Open(new SqliteOpenOptions(DataSource, mode, busyTimeoutMilliseconds ?? _requested.BusyTimeout ?? 0));
        try
        {
            Pragmas.ApplyBusyTimeout(connection, _requested);
            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }
}
