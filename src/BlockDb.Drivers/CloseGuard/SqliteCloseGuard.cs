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
/// <b>Invariant [C1].</b> A descriptor of a file is never closed by a connection opened here while a connection of this
/// process opened here could be taking a lock on it. Per file (its <see cref="FileKey"/>: on Linux its device and inode,
/// so every path to it, hard links included, finds one gate [FK1]) one gate orders
/// opens and closes: a close when other connections of the file are open runs while a
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
/// (another SQLite wrapper, or a second copy of the SQLite library), a file reached through two hard links on a system
/// other than Linux (two paths, so two gates), differently cased paths on a case-insensitive file system there, a file
/// deleted or replaced at its path while connections have it open (SQLite's own corruption case,
/// <see href="https://www.sqlite.org/howtocorrupt.html#_unlinking_or_renaming_a_database_file_while_in_use"/>), in-memory databases, which have no
/// file, and a connection that is never disposed (its finalizer closes it outside the gate, and the file's sentinel
/// then stays open until the process ends). On Windows, where file locks belong to a handle, the guard does nothing.
/// </para>
/// <para>
/// <b>A caller's connection</b> (<c>MicrosoftDataDriver.Borrow</c>, <c>BlockDatabaseBuilder.UseCallerConnection</c>) is the
/// caller's, opened and closed outside the guard; BlockDb then opens and closes no connection of its own to the file
/// (X3), so nothing of BlockDb's can drop the caller's locks. A BlockDb database on its own connections beside the
/// caller's connection in the same process is not covered: use the caller's connection instead (docs/ARCHITECTURE.md,
/// "External mode").
/// </para>
/// </remarks>
public static partial class SqliteCloseGuard
{
    /// <summary>The busy timeout, in milliseconds, the sentinel waits for its SHARED lock before a close is deferred, whatever the connections' own busy timeout.</summary>
    public const int SentinelBusyTimeoutMilliseconds = 250;

    /// <summary>The gate of each file ([FK1]: keyed by <see cref="FileKey"/>). Owner: <c>Gates</c>' own lock, held only to find or add a gate, and while a file that does not exist yet is opened (so created) and keyed.</summary>
    private static readonly Dictionary<FileKey, FileGate> Gates = [];

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
        if (!Guarded(options.Path))
        {
            return open(options);
        }

        var full = Path.GetFullPath(options.Path);
        FileGate gate;
        lock (Gates)
        {
            var key = FileKey.Of(full, out var becomesInode);
            if (becomesInode)
            {
                // [FK1] (a): the file does not exist (or a link names a file that does not), so its key changes from its path to
                // its inode as this open creates it. Open and key it under the registry's lock, so no other open of the
                // process keys it in between (two gates). No connection of the process can be open on a file not yet created.
                var connection = open(options);
                try
                {
                    gate = GateOf(FileKey.Of(full));
                    lock (gate.Sync)
                    {
                        gate.Opened(full);
                        return new GuardedConnection(connection, gate, options, open);
                    }
                }
                catch
                {
                    connection.Dispose();
                    throw;
                }
            }

            gate = GateOf(key);
        }

        lock (gate.Sync)
        {
            var connection = open(options);
            gate.Opened(full);
            return new GuardedConnection(connection, gate, options, open);
        }
    }

    /// <summary>How many connections opened through the guard are open on <paramref name="path"/> in this process, and how many of them wait to be closed.</summary>
    /// <param name="path">The database file's path as given to <see cref="Open"/>, or any other path to the same file.</param>
    /// <returns>Open connections (those disposed but deferred included) and deferred ones; zeros for a file never opened or not guarded.</returns>
    public static (int Open, int Deferred) Count(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (!Guarded(path))
        {
            return (0, 0);
        }

        FileGate? gate;
        lock (Gates)
        {
            if (!Gates.TryGetValue(FileKey.Of(path), out gate))
            {
                return (0, 0);
            }
        }

        lock (gate.Sync)
        {
            return (gate.OpenConnections + gate.Deferred.Count, gate.Deferred.Count);
        }
    }

    private static bool Guarded(string path) =>
        !(OperatingSystem.IsWindows() || path.Length == 0 || path == ":memory:" || path.StartsWith("file:", StringComparison.OrdinalIgnoreCase));

    /// <summary>The gate of <paramref name="key"/>, made when there is none; under <c>Gates</c>' lock.</summary>
    private static FileGate GateOf(FileKey key)
    {
        if (!Gates.TryGetValue(key, out var gate))
        {
            Gates[key] = gate = new FileGate(key);
        }

        return gate;
    }
}
