using Kind = BlockDb.Drivers.Native.TransactionStatements.StatementKind;

namespace BlockDb.Drivers.Native;

/// <summary>
/// BlockDb's statements on one <c>sqlite3*</c>, the one connection core of every SQLite provider: PInvoke's own handle
/// (<c>sqlite3_open_v2</c>), the handle Microsoft.Data.Sqlite opened (the driver's own connection or a caller's borrowed
/// one) and the handle System.Data.SQLite opened. Statements are prepared, bound, stepped, read, reset and finalized by
/// direct calls into <c>e_sqlite3</c> (<see cref="SqliteNative"/>, <see cref="NativeStatement"/>); failures are
/// <see cref="BlockDbException"/>s with SQLite's primary and extended codes. A provider supplies the handle and what
/// differs: how it closes (<see cref="IDisposable.Dispose"/>, after <see cref="Release"/> finalized the statements), how long
/// a busy first step is tried again, and which statements it refuses (<see cref="Guard"/>).
/// </summary>
internal abstract unsafe partial class NativeConnection : ISqliteConnection
{
    /// <summary>Guards <see cref="_statements"/> and the released state: a borrowed connection may be closed by its owner on another thread.</summary>
    private readonly Lock _gate = new();
    private readonly List<NativeStatement> _statements = [];
    private readonly string? _path;
    private nint _db;
    private string? _releasedBy;

    /// <param name="db">The connection's <c>sqlite3*</c>, valid until <see cref="Release"/>.</param>
    /// <param name="path">The file, for messages; <see langword="null"/> when the provider does not name it.</param>
    /// <param name="busyRetryMilliseconds">How long a first step that met <c>SQLITE_BUSY</c> or <c>SQLITE_LOCKED</c> is tried again after SQLite's own busy handler gave up (0: not retried).</param>
    protected NativeConnection(nint db, string? path, int busyRetryMilliseconds)
    {
        _db = db;
        _path = path;
        BusyRetryMilliseconds = busyRetryMilliseconds;
    }

    /// <summary>The raw <c>sqlite3*</c>, or 0 once released.</summary>
    internal nint Db => _db;

    /// <summary>How long a busy first step is tried again after SQLite's busy handler gave up; 0 for none.</summary>
    internal int BusyRetryMilliseconds { get; }

    public bool InTransaction
    {
        get
        {
            var inTransaction = SqliteNative.sqlite3_get_autocommit(Live(nameof(InTransaction))) == 0;
            GC.KeepAlive(this);
            return inTransaction;
        }
    }

    public long LastInsertRowId
    {
        get
        {
            var rowId = SqliteNative.sqlite3_last_insert_rowid(Live(nameof(LastInsertRowId)));
            GC.KeepAlive(this);
            return rowId;
        }
    }

    /// <summary>The main database's file (<c>sqlite3_db_filename</c>); empty for an in-memory or temporary database.</summary>
    public string FileName
    {
        get
        {
            var db = Live(nameof(FileName));
            fixed (byte* main = "main"u8)
            {
                // A UTF-8 literal is stored NUL-terminated.
                var name = SqliteErrors.Utf8(SqliteNative.sqlite3_db_filename(db, main));
                GC.KeepAlive(this);
                return name ?? string.Empty;
            }
        }
    }

    /// <summary>Whether the connection is released (disposed, or its owner closed it).</summary>
    protected bool IsReleased => _releasedBy is not null;

    /// <summary>" on 'path'" for messages, or empty.</summary>
    private string Where => _path is null ? string.Empty : $" on {Quoted.Path(_path)}";

    public ISqliteStatement Prepare(SqlStatement statement)
    {
        ArgumentNullException.ThrowIfNull(statement);
        var kind = Guard(statement.Text, runsNow: false);
        var context = $"Prepare of statement '{statement.Name}'";
        lock (_gate)
        {
            var db = Live(nameof(Prepare));
            var stmt = PrepareSingle(db, statement.Text, SqliteCodes.PreparePersistent, context);
            var parameters = SqliteNative.sqlite3_bind_parameter_count(stmt);
            var handle = new SqliteStatementHandle(stmt, Math.Max(parameters, 0));
            try
            {
                PreparedText.CheckParameters(parameters, i => SqliteErrors.Utf8(SqliteNative.sqlite3_bind_parameter_name(stmt, i)), statement, context);
                var result = new NativeStatement(this, db, statement, handle, SqliteNative.sqlite3_column_count(stmt), kind == Kind.Savepoint);
                _statements.Add(result);
                return result;
            }
            catch
            {
                handle.Dispose();
                throw;
            }
        }
    }

    /// <summary>Runs each statement of <paramref name="sql"/> in turn (a busy first step retried as the connection says); a statement the connection refuses is refused before it runs.</summary>
    public void Execute(string sql) => Run(sql, nameof(Execute), retry: true);

    /// <summary>Runs <paramref name="sql"/> without the provider's busy retry; the connection's own <c>busy_timeout</c> still applies.</summary>
    public void ExecuteWithoutRetry(string sql) => Run(sql, nameof(ExecuteWithoutRetry), retry: false);

    public string? QueryText(string sql)
    {
        ArgumentNullException.ThrowIfNull(sql);
        _ = Guard(sql, runsNow: true);
        var db = Live(nameof(QueryText));
        var context = $"QueryText of '{sql}'{Where}";
        var stmt = PrepareSingle(db, sql, 0, context);
        try
        {
            var rc = RetryIfBusy(stmt, SqliteNative.sqlite3_step(stmt));
            if (rc == SqliteCodes.Done)
            {
                return null;
            }

            if (rc != SqliteCodes.Row)
            {
                throw SqliteErrors.FromConnection(db, rc, context);
            }

            return SqliteNative.sqlite3_column_count(stmt) == 0 ? null : NativeText.ReadColumn(db, stmt, 0, context);
        }
        finally
        {
            _ = SqliteNative.sqlite3_finalize(stmt);
            GC.KeepAlive(this);
        }
    }

    public SqliteCacheStats? ReadCacheStats()
    {
        var db = Live(nameof(ReadCacheStats));
        long Read(int op)
        {
            int current, highwater;
            var rc = SqliteNative.sqlite3_db_status(db, op, &current, &highwater, 0);
            return rc == SqliteCodes.Ok ? current : throw SqliteErrors.FromConnection(db, rc, $"sqlite3_db_status({op}){Where}");
        }

        var stats = new SqliteCacheStats(Read(SqliteCacheCounters.Hit), Read(SqliteCacheCounters.Miss), Read(SqliteCacheCounters.Write), Read(SqliteCacheCounters.Spill));
        GC.KeepAlive(this);
        return stats;
    }

    public abstract void Dispose();

    /// <summary>Forgets a statement its owner disposed.</summary>
    internal void Forget(NativeStatement statement)
    {
        lock (_gate)
        {
            _ = _statements.Remove(statement);
        }
    }

    /// <summary>Throws unless a transaction is open: outside the caller's transaction a savepoint would begin one (X1).</summary>
    internal void RequireTransactionForSavepoint(string sql)
    {
        if (SqliteNative.sqlite3_get_autocommit(Live(nameof(RequireTransactionForSavepoint))) != 0)
        {
            throw new InvalidOperationException(TransactionStatements.OutsideTransaction(sql));
        }
    }

    /// <summary>Finalizes BlockDb's statements (so a close that follows completes at once) and marks the connection released; later calls throw <see cref="ObjectDisposedException"/> naming <paramref name="reason"/>.</summary>
    /// <returns><see langword="false"/> when it was already released.</returns>
    protected bool Release(string reason)
    {
        lock (_gate)
        {
            if (_releasedBy is not null)
            {
                return false;
            }

            _releasedBy = reason;
            foreach (var statement in _statements)
            {
                statement.Release();
            }

            _statements.Clear();
            _db = 0;
            return true;
        }
    }

    /// <summary>Classifies <paramref name="sql"/> and throws for a statement this connection refuses (<paramref name="runsNow"/>: it runs at once, not prepared for later). A connection that owns its transactions runs everything.</summary>
    protected virtual Kind Guard(string sql, bool runsNow) => Kind.Other;

    /// <summary>The handle, or <see cref="ObjectDisposedException"/> once the connection is released.</summary>
    protected nint Live(string call)
    {
        var db = _db;
        if (db == 0)
        {
            ThrowReleased(call);
        }

        return db;
    }

    private void ThrowReleased(string call) =>
        throw new ObjectDisposedException(GetType().Name, $"The SQLite connection{Where} cannot run {call}: {_releasedBy ?? "it is released"}.");
}
