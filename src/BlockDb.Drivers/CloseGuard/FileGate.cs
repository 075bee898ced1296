using System.Globalization;

namespace BlockDb.Drivers;

public static partial class SqliteCloseGuard
{
    /// <summary>One file's gate. Owner: <see cref="Sync"/>; every field is read and written only under it.</summary>
    private sealed class FileGate(FileKey key)
    {
        public readonly Lock Sync = new();
        public readonly List<ISqliteConnection> Deferred = [];
        public int OpenConnections;
        public ISqliteConnection? Sentinel;

        /// <summary>The full path of the latest open, where the sentinel opens: it named this file then.</summary>
        private string? _path;

        /// <summary>Counts a connection opened on this file through <paramref name="fullPath"/>.</summary>
        public void Opened(string fullPath)
        {
            OpenConnections++;
            _path = fullPath;
        }

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
                    // A full path that named this file at an open, not the closing connection's own: a relative one may
                    // name another file by now (the working folder changed), and a sentinel there would defer nothing.
                    var sentinel = open(options with { Path = _path!, Mode = mode, BusyTimeoutMilliseconds = timeout });
                    try
                    {
                        if (FileKey.Of(_path!) != key)
                        {
                            // The path names another file now (this one was deleted or replaced, or a link changed).
                            throw new BlockDbException($"'{_path}' no longer names the file its connections have open; the close is deferred.");
                        }

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
}
