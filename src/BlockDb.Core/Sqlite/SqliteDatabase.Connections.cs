using BlockDb.Drivers;

namespace BlockDb.Sqlite;

/// <summary>The SQLite database's connections, its enumerations' registry, its close, and the refusals of External mode.</summary>
internal sealed partial class SqliteDatabase
{
    /// <summary>A connection with the pragmas applied, for an enumeration.</summary>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    internal ISqliteConnection OpenReadConnection() => OpenWorkConnection();

    /// <summary>A connection with the pragmas applied, for work outside sessions (a conversion).</summary>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    internal ISqliteConnection OpenWorkConnection()
    {
        ThrowIfDisposed();
        return OpenConfiguredConnection();
    }

    /// <summary>Registers an open enumeration, so the database's dispose closes it; closes it at once when the database was disposed meanwhile.</summary>
    internal void Register(IReadCursor cursor)
    {
        _cursors.TryAdd(cursor, 0);
        if (Disposing)
        {
            cursor.Dispose();
            throw Disposed("the enumeration was opening");
        }
    }

    /// <summary>Forgets a closed enumeration.</summary>
    internal void Unregister(IReadCursor cursor) => _cursors.TryRemove(cursor, out _);

    protected override ValueTask CloseEnumerationsAsync(List<Exception> errors) => DisposeEachAsync(_cursors.Keys, errors);

    protected override ValueTask CloseEngineAsync()
    {
        if (_caller is not null)
        {
            // BlockDb's statements finalized; the caller's connection stays open and the caller's [X3].
            _caller.Dispose();
        }
        else if (!ReadOnly)
        {
            // Every session is closed, so the layout's state is still: the KeyMap layout writes its snapshot (never throws).
            _layout.Close(busyTimeout => OpenConfiguredConnection(busyTimeout));
        }

        _commits.Release();
        return ValueTask.CompletedTask;
    }

    /// <summary>A connection with the pragmas applied (for the check and the repair).</summary>
    private ISqliteConnection OpenConfiguredConnection(int? busyTimeoutMilliseconds = null)
    {
        if (_caller is not null)
        {
            return _caller.View(); // no pragma is BlockDb's to set on the caller's connection
        }

        var connection = OpenConnection(busyTimeoutMilliseconds);
        try
        {
            Pragmas.ApplyAndVerify(connection, Requested(busyTimeoutMilliseconds), Logger, DataSource, ReadOnly);
            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    /// <summary>A new connection to the file; in External mode a view of the caller's (BlockDb opens none [X3]).</summary>
    private ISqliteConnection OpenConnection(int? busyTimeoutMilliseconds = null)
    {
        if (_caller is not null)
        {
            return _caller.View();
        }

        var mode = ReadOnly ? SqliteOpenMode.ReadOnly : SqliteOpenMode.ReadWriteCreate;
        var requested = Requested(busyTimeoutMilliseconds);
        var connection = _driver.Open(new SqliteOpenOptions(DataSource, mode, requested.BusyTimeout ?? 0));
        try
        {
            Pragmas.ApplyBusyTimeout(connection, requested);
            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    /// <summary>The requested pragmas, with a connection's own busy timeout in place of the configured one when it has one (the repair waits for no lock).</summary>
    private PragmaSettings Requested(int? busyTimeoutMilliseconds) =>
        busyTimeoutMilliseconds is { } ms ? _requested with { BusyTimeout = ms } : _requested;

    /// <summary>Refuses an operation that commits on its own, in External mode.</summary>
    /// <exception cref="NotSupportedException">The database runs on a caller's connection.</exception>
    protected override void RefuseOwnCommits(string operation, string why)
    {
        if (_caller is not null)
        {
            throw CallerConnectionRefuses(operation, why);
        }
    }

    private NotSupportedException CallerConnectionRefuses(string operation, string why) =>
        new($"{operation} is not available on a caller's connection ({Quoted.Path(DataSource)}): {why}, and the transaction is the caller's. Open BlockDb on its own connection for it (without UseCallerConnection).");
}
