using System.Collections.Concurrent;
using System.Globalization;

namespace BlockDb.Drivers;

/// <summary>
/// Makes closing a SQLite connection safe for the other connections that the same process holds on the same file.
/// Every provider's <see cref="ISqliteDriver.Open"/> goes through <see cref="Open"/>; a provider author calls it with
/// the provider's own open function.
/// </summary>
/// <remarks>
/// <para>
/// <b>Why.</b> SQLite's unix VFS locks a database with POSIX advisory locks, which belong to the process, and the
/// kernel drops all of a process's locks on a file when the process closes <em>any</em> descriptor of that file
/// (<see href="https://www.sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_"/>).
/// SQLite keeps a closing connection's descriptor open while another connection of the process holds a lock, but it
/// decides that before it closes the descriptor and without excluding a lock that another thread takes in between
/// (its <c>unixClose</c> checks the lock count under the inode's mutex, releases it, then closes; <c>unixLock</c> takes
/// only that mutex). A connection that locks the file in that window keeps believing it holds its lock after the
/// kernel dropped it. BlockDb's multi-process stress run showed what follows in the rollback-journal modes: another
/// process found the connection's journal "hot", played it back over committed pages and deleted it
/// (<c>SQLITE_IOERR_DELETE_NOENT</c> at the owner's COMMIT), and acknowledged blocks and blocksets were lost. In WAL
/// mode the dropped lock is the one that tells a closing process in another process that the WAL is still in use.
/// </para>
/// <para>
/// <b>Invariant.</b> A descriptor of a file is never closed by a connection opened here while a connection of this
/// process opened here could be taking a lock on it. Per file (its full path, with every symbolic link along it
/// resolved) one gate orders opens and closes: a close when other connections of the file are open runs while a
/// <em>sentinel</em> connection holds a read transaction (a SHARED lock), so SQLite defers closing the descriptor
/// and closes it later itself, under its inode mutex, when the last lock of the process is released; the close of
/// the last connection of the file in the process (and the sentinel's) runs under the gate, when no other
/// connection opened here exists. When the sentinel cannot take its lock within
/// <see cref="SentinelBusyTimeoutMilliseconds"/>, the connection stays open, holding no transaction
/// (in WAL mode SQLite keeps a SHARED lock on the file for every open connection, which only delays another process's
/// last close from checkpointing and deleting the WAL), and is closed by the next close that gets the lock, or with the last connection. The sentinel does
/// not wait for the connections' own busy timeout: the lock it waits behind may be held by the very thread that
/// closes, or by a writer that waits for a reader that waits for this gate, and a deferred close is safe.
/// </para>
/// <para>
/// <b>Not covered.</b> Connections to the file that the process opens without going through a BlockDb driver
/// (another SQLite wrapper, or a second copy of the SQLite library), a file reached through two hard links (two
/// paths, so two gates), differently cased paths on a case-insensitive file system, in-memory databases, which have no
/// file, and a connection that is never disposed (its finalizer closes it outside the gate, and the file's sentinel
/// then stays open until the process ends). On Windows, where file locks belong to a handle, the guard does nothing.
/// </para>
/// </remarks>
public static class SqliteCloseGuard
{
    /// <summary>The busy timeout, in milliseconds, the sentinel waits for its SHARED lock before a close is deferred, whatever the connections' own busy timeout.</summary>
    public const int SentinelBusyTimeoutMilliseconds = 250;

    private static readonly ConcurrentDictionary<string, FileGate> Gates = new(StringComparer.Ordinal);

    /// <summary>
    /// Opens a connection with <paramref name="open"/> under the file's gate and returns it wrapped, so that its
    /// <see cref="IDisposable.Dispose"/> closes it safely for the process's other connections to the file.
    /// </summary>
    /// <param name="options">The file, the open mode and the busy timeout (milliseconds).</param>
    /// <param name="open">The provider's own open; it must not run statements that take a lock on another connection.</param>
    /// <returns>The connection; for an in-memory database or on Windows, the one <paramref name="open"/> returned, unwrapped.</returns>
    /// <exception cref="ArgumentNullException">An argument is <see langword="null"/>.</exception>
    /// <remarks>Whatever <paramref name="open"/> throws passes through; nothing is registered then.</remarks>
    public static ISqliteConnection Open(SqliteOpenOptions options, Func<SqliteOpenOptions, ISqliteConnection> open)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(open);
        if (KeyOf(options.Path) is not { } key)
        {
            return open(options);
        }

        var gate = Gates.GetOrAdd(key, static k => new FileGate(k));
        lock (gate.Sync)
        {
            var connection = open(options);
            gate.OpenConnections++;
            return new GuardedConnection(connection, gate, options, open);
        }
    }

    /// <summary>How many connections opened through the guard are open on <paramref name="path"/> in this process, and how many of them wait to be closed.</summary>
    /// <param name="path">The database file's path as given to <see cref="Open"/>.</param>
    /// <returns>Open connections (those disposed but deferred included) and deferred ones; zeros for a file never opened or not guarded.</returns>
    public static (int Open, int Deferred) Count(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (KeyOf(path) is not { } key || !Gates.TryGetValue(key, out var gate))
        {
            return (0, 0);
        }

        lock (gate.Sync)
        {
            return (gate.OpenConnections + gate.Deferred.Count, gate.Deferred.Count);
        }
    }

    private static string? KeyOf(string path)
    {
        if (OperatingSystem.IsWindows() || path.Length == 0 || path == ":memory:"
            || path.StartsWith("file:", StringComparison.OrdinalIgnoreCase))
        {
            return null;
        }

        var full = Path.GetFullPath(path);
        try
        {
            return RealPath(full);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // An unreadable link or folder: SQLite's own open reports it; the path is the key meanwhile.
            return full;
        }
    }

    /// <summary>
    /// The full path with every symbolic link along it resolved, folders and the file itself (as realpath(3) does):
    /// a file opened through a linked folder and through its own path gets one gate. After 40 links (a loop), the
    /// path as given.
    /// </summary>
    private static string RealPath(string full)
    {
        var root = Path.GetPathRoot(full) ?? "/";
        var parts = full[root.Length..].Split(Path.DirectorySeparatorChar, StringSplitOptions.RemoveEmptyEntries);
        var resolved = root;
        for (int i = 0, links = 0; i < parts.Length; i++)
        {
            var next = Path.Combine(resolved, parts[i]);
            if (new FileInfo(next).LinkTarget is not { } target)
            {
                resolved = next;
                continue;
            }

            if (++links > 40)
            {
                return full;
            }

            // Start again from the link's target, with the rest of the path after it.
            var restarted = Path.Combine([Path.GetFullPath(target, resolved), .. parts[(i + 1)..]]);
            root = Path.GetPathRoot(restarted) ?? "/";
            parts = restarted[root.Length..].Split(Path.DirectorySeparatorChar, StringSplitOptions.RemoveEmptyEntries);
            resolved = root;
            i = -1;
        }

        return resolved;
    }

    /// <summary>One file's gate. Owner: <see cref="Sync"/>; every field is read and written only under it.</summary>
    private sealed class FileGate(string key)
    {
        public readonly Lock Sync = new();
        public readonly List<ISqliteConnection> Deferred = [];
        public int OpenConnections;
        public ISqliteConnection? Sentinel;

        /// <summary>Closes <paramref name="connection"/> as the invariant above says; called once per connection.</summary>
        public void Close(ISqliteConnection connection, SqliteOpenOptions options, Func<SqliteOpenOptions, ISqliteConnection> open)
        {
            lock (Sync)
            {
                OpenConnections--;
                var idle = EndTransaction(connection);
                if (OpenConnections == 0)
                {
                    // No other connection opened here exists, and none can open before this gate is released.
                    DisposeWithDeferred(connection);
                    Sentinel?.Dispose();
                    Sentinel = null;
                    return;
                }

                if (!TryHoldSharedLock(options, open))
                {
                    if (idle)
                    {
                        Deferred.Add(connection);
                    }
                    else
                    {
                        // Its transaction would not end, so deferring it would keep its lock: closing it is the lesser harm.
                        connection.Dispose();
                    }

                    return;
                }

                try
                {
                    DisposeWithDeferred(connection);
                }
                finally
                {
                    ReleaseSharedLock();
                }
            }
        }

        /// <summary>Disposes <paramref name="connection"/> and every deferred one; only when no close can drop a lock (see <see cref="Close"/>).</summary>
        private void DisposeWithDeferred(ISqliteConnection connection)
        {
            connection.Dispose();
            foreach (var deferred in Deferred)
            {
                deferred.Dispose();
            }

            Deferred.Clear();
        }

        private bool TryHoldSharedLock(SqliteOpenOptions options, Func<SqliteOpenOptions, ISqliteConnection> open)
        {
            try
            {
                if (Sentinel is null)
                {
                    var mode = options.Mode == SqliteOpenMode.ReadOnly ? SqliteOpenMode.ReadOnly : SqliteOpenMode.ReadWrite;
                    // Not the connection's busy timeout (BlockDb allows an hour): the wait holds the gate, and the
                    // EXCLUSIVE or PENDING lock it waits behind may wait for this gate or for the closing thread.
                    const int timeout = SentinelBusyTimeoutMilliseconds;
                    // The gate's full path, not the closing connection's: a relative one may name another file by now
                    // (the working folder changed), and a sentinel there would defer nothing.
                    var sentinel = open(options with { Path = key, Mode = mode, BusyTimeoutMilliseconds = timeout });
                    try
                    {
                        sentinel.Execute(string.Create(CultureInfo.InvariantCulture, $"PRAGMA busy_timeout = {timeout}"));
                    }
                    catch
                    {
                        sentinel.Dispose();
                        throw;
                    }

                    Sentinel = sentinel;
                }

                Sentinel.Execute("BEGIN");
                Sentinel.QueryText("SELECT 1 FROM sqlite_schema LIMIT 1");
                return true;
            }
            catch (BlockDbException)
            {
                // Busy beyond the timeout (or a hot journal a read-only sentinel cannot roll back): defer the close.
                EndTransaction(Sentinel);
                return false;
            }
        }

        private void ReleaseSharedLock()
        {
            // Ending the read transaction releases the process's last lock when no other connection holds one, and
            // SQLite then closes the deferred descriptors itself, under its inode mutex.
            if (!EndTransaction(Sentinel) && Sentinel is { } stuck)
            {
                // A sentinel whose transaction will not end would hold its lock: it waits, as a deferred connection,
                // for the last close of the file.
                Deferred.Add(stuck);
                Sentinel = null;
            }
        }

        /// <summary>Ends an open transaction (a close would roll it back anyway), so the connection holds no write lock and no read transaction; false when that failed.</summary>
        private static bool EndTransaction(ISqliteConnection? connection)
        {
            if (connection is not { InTransaction: true })
            {
                return true;
            }

            try
            {
                connection.Execute("ROLLBACK");
                return true;
            }
            catch (BlockDbException)
            {
                return false;
            }
            catch (ObjectDisposedException)
            {
                return false;
            }
        }
    }

    /// <summary>A connection whose dispose goes through its file's gate; every other member is the inner connection's.</summary>
    private sealed class GuardedConnection(
        ISqliteConnection inner, FileGate gate, SqliteOpenOptions options, Func<SqliteOpenOptions, ISqliteConnection> open) : ISqliteConnection
    {
        private int _disposed;

        public bool InTransaction => inner.InTransaction;

        public ISqliteStatement Prepare(SqlStatement statement) => inner.Prepare(statement);

        public void Execute(string sql) => inner.Execute(sql);

        public void ExecuteWithoutRetry(string sql) => inner.ExecuteWithoutRetry(sql);

        public string? QueryText(string sql) => inner.QueryText(sql);

        public SqliteCacheStats? ReadCacheStats() => inner.ReadCacheStats();

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                gate.Close(inner, options, open);
            }
        }
    }
}
