using System.Text;
using BlockDb.Drivers;
using BlockDb.Drivers.Native;
using SQLitePCL;
using Kind = BlockDb.Drivers.Native.TransactionStatements.StatementKind;

namespace BlockDb.MicrosoftData.Raw;

/// <summary>
/// BlockDb's statements on the <c>sqlite3*</c> of a Microsoft.Data.Sqlite connection, prepared, bound and stepped through
/// SQLitePCL.raw without <c>SqliteCommand</c> or <c>SqliteDataReader</c> (issue 25: the ADO.NET command path cost about
/// three times the C form of a lookup). The one code path of both kinds of connection: the driver's own
/// (<see cref="MicrosoftDataConnection"/>) and a caller's (<see cref="Borrowed.BorrowedConnection"/>), which differ in who
/// closes the connection, which statements they refuse and whether a busy first step is retried.
/// </summary>
internal abstract class RawConnection : ISqliteConnection
{
    /// <summary>Microsoft.Data.Sqlite's pause between two tries of a busy statement.</summary>
    private const int BusyPauseMilliseconds = 150;

    /// <summary>Guards <see cref="_statements"/> and the closed state: a borrowed connection may be closed by its owner on another thread.</summary>
    private readonly Lock _gate = new();
    private readonly List<RawStatement> _statements = [];
    private readonly sqlite3 _db;
    private string? _closedBy;

    /// <param name="db">The connection's handle.</param>
    /// <param name="busyRetryMilliseconds">How long a first step that met <c>SQLITE_BUSY</c> or <c>SQLITE_LOCKED</c> is tried again, after SQLite's own busy handler gave up (0: not retried).</param>
    protected RawConnection(sqlite3 db, int busyRetryMilliseconds)
    {
        _db = db;
        Pointer = db.DangerousGetHandle();
        BusyRetryMilliseconds = busyRetryMilliseconds;
    }

    /// <summary>The <c>sqlite3*</c> of the handle, for <see cref="RawNative"/>'s calls; valid while the connection is not released.</summary>
    internal nint Pointer { get; }

    /// <summary>How long a busy first step is tried again after SQLite's busy handler gave up; 0 for none.</summary>
    internal int BusyRetryMilliseconds { get; }

    public bool InTransaction
    {
        get
        {
            _ = Live(nameof(InTransaction));
            return RawNative.sqlite3_get_autocommit(Pointer) == 0;
        }
    }

    public long LastInsertRowId => raw.sqlite3_last_insert_rowid(Live(nameof(LastInsertRowId)));

    /// <summary>The main database's file (<c>sqlite3_db_filename</c>); empty for an in-memory or temporary database.</summary>
    public string FileName => raw.sqlite3_db_filename(Live(nameof(FileName)), "main").utf8_to_string() ?? string.Empty;

    /// <summary>Whether the connection is released (disposed, or its owner closed it).</summary>
    protected bool IsReleased => _closedBy is not null;

    public ISqliteStatement Prepare(SqlStatement statement)
    {
        ArgumentNullException.ThrowIfNull(statement);
        var kind = Guard(statement.Text, runsNow: false);
        var context = $"Prepare of statement '{statement.Name}'";
        lock (_gate)
        {
            var db = Live(nameof(Prepare));
            var stmt = PrepareSingle(db, statement.Text, SqliteCodes.PreparePersistent, context);
            try
            {
                var parameters = raw.sqlite3_bind_parameter_count(stmt);
                PreparedText.CheckParameters(parameters, i => raw.sqlite3_bind_parameter_name(stmt, i).utf8_to_string(), statement, context);
                var result = new RawStatement(this, db, statement, stmt, parameters, raw.sqlite3_column_count(stmt), kind == Kind.Savepoint);
                _statements.Add(result);
                return result;
            }
            catch
            {
                stmt.Dispose();
                throw;
            }
        }
    }

    /// <summary>Runs each statement of <paramref name="sql"/> in turn; a statement the connection refuses is refused before it runs.</summary>
    public void Execute(string sql)
    {
        ArgumentNullException.ThrowIfNull(sql);
        var db = Live(nameof(Execute));
        var context = $"Execute of '{sql}'";
        ReadOnlySpan<byte> rest = Encoding.UTF8.GetBytes(sql);
        while (!rest.IsEmpty)
        {
            var rc = raw.sqlite3_prepare_v3(db, rest, 0, out var stmt, out var tail);
            using (stmt)
            {
                if (rc != SqliteCodes.Ok)
                {
                    throw RawErrors.FromConnection(db, rc, context);
                }

                if (stmt.IsInvalid)
                {
                    return; // only whitespace and comments were left
                }

                var text = Encoding.UTF8.GetString(rest[..(rest.Length - tail.Length)]);
                _ = Guard(text, runsNow: true);
                rc = RetryIfBusy(stmt.DangerousGetHandle(), raw.sqlite3_step(stmt));
                while (rc == SqliteCodes.Row)
                {
                    rc = raw.sqlite3_step(stmt);
                }

                if (rc != SqliteCodes.Done)
                {
                    throw RawErrors.FromConnection(db, rc, context);
                }
            }

            rest = tail;
        }
    }

    /// <summary>Runs <paramref name="sql"/> without Microsoft.Data.Sqlite's busy retry; the connection's own <c>busy_timeout</c> still applies. A borrowed connection never retries, so this is <see cref="Execute"/> there.</summary>
    public virtual void ExecuteWithoutRetry(string sql) => Execute(sql);

    public string? QueryText(string sql)
    {
        ArgumentNullException.ThrowIfNull(sql);
        _ = Guard(sql, runsNow: true);
        var db = Live(nameof(QueryText));
        var context = $"QueryText of '{sql}'";
        using var stmt = PrepareSingle(db, sql, 0, context);
        var rc = RetryIfBusy(stmt.DangerousGetHandle(), raw.sqlite3_step(stmt));
        if (rc == SqliteCodes.Done)
        {
            return null;
        }

        if (rc != SqliteCodes.Row)
        {
            throw RawErrors.FromConnection(db, rc, context);
        }

        return raw.sqlite3_column_count(stmt) == 0 || raw.sqlite3_column_type(stmt, 0) == SqliteCodes.NullType
            ? null
            : raw.sqlite3_column_text(stmt, 0).utf8_to_string();
    }

    public SqliteCacheStats? ReadCacheStats() => RawErrors.ReadCacheStats(Live(nameof(ReadCacheStats)));

    public abstract void Dispose();

    internal void Forget(RawStatement statement)
    {
        lock (_gate)
        {
            _ = _statements.Remove(statement);
        }
    }

    /// <summary>Throws unless a transaction is open: outside the caller's transaction a savepoint would begin one (X1).</summary>
    internal void RequireTransactionForSavepoint(string sql)
    {
        if (raw.sqlite3_get_autocommit(_db) != 0)
        {
            throw new InvalidOperationException(TransactionStatements.OutsideTransaction(sql));
        }
    }

    /// <summary>
    /// Microsoft.Data.Sqlite's command-level retry, kept for the driver's own connections: a first step that returned
    /// <c>SQLITE_BUSY</c> or <c>SQLITE_LOCKED</c> is reset and tried again every 150 ms until
    /// <see cref="BusyRetryMilliseconds"/> have passed. Returns at once (nothing on the hot path) when the first result
    /// is not one of those.
    /// </summary>
    internal int RetryIfBusy(nint stmt, int rc)
    {
        if (!IsBusy(rc) || BusyRetryMilliseconds == 0)
        {
            return rc;
        }

        var start = Environment.TickCount64;
        while (IsBusy(rc) && Environment.TickCount64 - start < BusyRetryMilliseconds)
        {
            _ = RawNative.sqlite3_reset(stmt);
            Thread.Sleep(BusyPauseMilliseconds);
            rc = RawNative.sqlite3_step(stmt);
        }

        return rc;
    }

    /// <summary>Finalizes BlockDb's statements and marks the connection released; later calls throw <see cref="ObjectDisposedException"/>.</summary>
    protected void Release(string reason)
    {
        lock (_gate)
        {
            _closedBy ??= reason;
            foreach (var statement in _statements)
            {
                statement.Release();
            }

            _statements.Clear();
        }
    }

    /// <summary>Classifies <paramref name="sql"/> and throws for a statement this connection refuses (<paramref name="runsNow"/>: it runs at once, not prepared for later).</summary>
    protected abstract Kind Guard(string sql, bool runsNow);

    /// <summary>The handle, or <see cref="ObjectDisposedException"/> once the connection is released.</summary>
    protected sqlite3 Live(string call)
    {
        if (_closedBy is { } reason)
        {
            throw new ObjectDisposedException(GetType().Name, $"The SQLite connection cannot run {call}: {reason}.");
        }

        return _db;
    }

    private static bool IsBusy(int rc) => (rc & 0xFF) is SqliteResultCode.Busy or SqliteResultCode.Locked;

    /// <summary>Prepares exactly one SQL statement; throws when the text holds none, more than one, or SQLite fails.</summary>
    private static sqlite3_stmt PrepareSingle(sqlite3 db, string sql, uint flags, string context)
    {
        ReadOnlySpan<byte> text = Encoding.UTF8.GetBytes(sql);
        var rc = raw.sqlite3_prepare_v3(db, text, flags, out var stmt, out var tail);
        if (rc != SqliteCodes.Ok)
        {
            stmt.Dispose();
            throw RawErrors.FromConnection(db, rc, context);
        }

        if (stmt.IsInvalid)
        {
            stmt.Dispose();
            throw PreparedText.NoStatement(context);
        }

        try
        {
            PreparedText.CheckNoMoreStatements(tail, (ReadOnlySpan<byte> next, out bool found, out int consumed) => ProbeNext(db, next, out found, out consumed), context);
        }
        catch
        {
            stmt.Dispose();
            throw;
        }

        return stmt;
    }

    /// <summary><see cref="PreparedText.Probe"/> over SQLitePCL.raw.</summary>
    private static int ProbeNext(sqlite3 db, ReadOnlySpan<byte> text, out bool found, out int consumed)
    {
        var rc = raw.sqlite3_prepare_v3(db, text, 0, out var next, out var tail);
        found = !next.IsInvalid;
        next.Dispose();
        consumed = text.Length - tail.Length;
        return rc;
    }
}
