using BlockDb.Drivers;
using BlockDb.Drivers.Native;

namespace BlockDb.PInvoke;

/// <summary>
/// One <c>sqlite3*</c>, owned by a <see cref="SqliteConnectionHandle"/> so it is closed even when the caller
/// forgets to dispose. Hot-path calls use the raw handle cached in <see cref="Db"/>.
/// </summary>
internal sealed unsafe partial class PInvokeConnection : ISqliteConnection
{
    private readonly SqliteConnectionHandle _handle;
    private readonly List<PInvokeStatement> _statements = [];
    private readonly string _path;
    private nint _db;

    private PInvokeConnection(SqliteConnectionHandle handle, string path)
    {
        _handle = handle;
        _db = handle.DangerousGetHandle();
        _path = path;
    }

    /// <summary>The raw <c>sqlite3*</c>, or 0 once disposed.</summary>
    internal nint Db => _db;

    public bool InTransaction
    {
        get
        {
            var db = ThrowIfDisposed(nameof(InTransaction));
            var inTransaction = NativeMethods.sqlite3_get_autocommit(db) == 0;
            GC.KeepAlive(this);
            return inTransaction;
        }
    }

    public long LastInsertRowId
    {
        get
        {
            var db = ThrowIfDisposed(nameof(LastInsertRowId));
            var rowId = NativeMethods.sqlite3_last_insert_rowid(db);
            GC.KeepAlive(this);
            return rowId;
        }
    }

    public ISqliteStatement Prepare(SqlStatement statement)
    {
        ArgumentNullException.ThrowIfNull(statement);
        var db = ThrowIfDisposed(nameof(Prepare));
        var context = $"Prepare of statement '{statement.Name}'";
        var stmt = PrepareSingle(db, statement.Text, NativeMethods.SQLITE_PREPARE_PERSISTENT, context);

        var parameterCount = NativeMethods.sqlite3_bind_parameter_count(stmt);
        var handle = new SqliteStatementHandle(stmt, Math.Max(parameterCount, 0));
        try
        {
            PreparedText.CheckParameters(parameterCount, i => SqliteErrors.Utf8(NativeMethods.sqlite3_bind_parameter_name(stmt, i)), statement, context);
            var result = new PInvokeStatement(this, statement, handle, NativeMethods.sqlite3_column_count(stmt));
            _statements.Add(result);
            return result;
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    public void Execute(string sql)
    {
        ArgumentNullException.ThrowIfNull(sql);
        var db = ThrowIfDisposed(nameof(Execute));
        var text = NativeText.ToUtf8Z(sql);
        byte* errmsg = null;
        int rc;
        fixed (byte* pText = text)
        {
            rc = NativeMethods.sqlite3_exec(db, pText, 0, 0, &errmsg);
        }

        if (rc != NativeMethods.SQLITE_OK)
        {
            var message = SqliteErrors.Utf8(errmsg);
            NativeMethods.sqlite3_free(errmsg);
            var extended = SqliteErrorText.Extended(rc, NativeMethods.sqlite3_extended_errcode(db));
            throw SqliteErrors.Create(rc, extended, $"Execute of '{sql}' on {Quoted.Path(_path)} failed", message);
        }

        GC.KeepAlive(this);
    }

    public SqliteCacheStats? ReadCacheStats()
    {
        var db = ThrowIfDisposed(nameof(ReadCacheStats));
        long Read(int op)
        {
            int current, highwater;
            var rc = NativeMethods.sqlite3_db_status(db, op, &current, &highwater, 0);
            return rc == NativeMethods.SQLITE_OK ? current : throw SqliteErrors.FromConnection(db, rc, $"sqlite3_db_status({op}) on {Quoted.Path(_path)}");
        }

        var stats = new SqliteCacheStats(Read(SqliteCacheCounters.Hit), Read(SqliteCacheCounters.Miss), Read(SqliteCacheCounters.Write), Read(SqliteCacheCounters.Spill));
        GC.KeepAlive(this);
        return stats;
    }

    public string? QueryText(string sql)
    {
        ArgumentNullException.ThrowIfNull(sql);
        var db = ThrowIfDisposed(nameof(QueryText));
        var context = $"QueryText of '{sql}' on {Quoted.Path(_path)}";
        var stmt = PrepareSingle(db, sql, 0, context);
        try
        {
            var rc = NativeMethods.sqlite3_step(stmt);
            if (rc == NativeMethods.SQLITE_DONE)
            {
                return null;
            }

            if (rc != NativeMethods.SQLITE_ROW)
            {
                throw SqliteErrors.FromConnection(db, rc, context);
            }

            return NativeMethods.sqlite3_column_count(stmt) == 0 ? null : NativeText.ReadColumn(db, stmt, 0, context);
        }
        finally
        {
            _ = NativeMethods.sqlite3_finalize(stmt);
            GC.KeepAlive(this);
        }
    }

    public void Dispose()
    {
        if (_db == 0)
        {
            return;
        }

        // Statements first (finalize, then free their text buffers), then the connection (close_v2).
        foreach (var statement in _statements)
        {
            statement.Release();
        }

        _statements.Clear();
        _db = 0;
        _handle.Dispose();
    }

    /// <summary>Forgets a statement its owner disposed.</summary>
    internal void Forget(PInvokeStatement statement)
    {
        if (_db != 0)
        {
            _ = _statements.Remove(statement);
        }
    }

    /// <summary>Prepares exactly one SQL statement; throws when the text holds none, more than one, or SQLite fails.</summary>
    private static nint PrepareSingle(nint db, string sql, uint flags, string context)
    {
        var text = NativeText.ToUtf8Z(sql);
        var length = text.Length - 1;
        fixed (byte* pText = text)
        {
            nint stmt = 0;
            byte* tail = null;
            var rc = NativeMethods.sqlite3_prepare_v3(db, pText, length, flags, &stmt, &tail);
            if (rc != NativeMethods.SQLITE_OK)
            {
                throw SqliteErrors.FromConnection(db, rc, context);
            }

            if (stmt == 0)
            {
                throw PreparedText.NoStatement(context);
            }

            try
            {
                var rest = tail == null ? [] : new ReadOnlySpan<byte>(tail, (int)(pText + length - tail));
                PreparedText.CheckNoMoreStatements(rest, (ReadOnlySpan<byte> next, out bool found, out int consumed) => ProbeNext(db, next, out found, out consumed), context);
            }
            catch
            {
                _ = NativeMethods.sqlite3_finalize(stmt);
                throw;
            }

            return stmt;
        }
    }

    /// <summary>Prepares (and finalizes) the first statement of <paramref name="text"/>: <see cref="PreparedText.Probe"/> over this binding.</summary>
    private static int ProbeNext(nint db, ReadOnlySpan<byte> text, out bool found, out int consumed)
    {
        fixed (byte* pText = text)
        {
            nint next = 0;
            byte* nextTail = null;
            var rc = NativeMethods.sqlite3_prepare_v3(db, pText, text.Length, 0, &next, &nextTail);
            found = next != 0;
            if (found)
            {
                _ = NativeMethods.sqlite3_finalize(next);
            }

            consumed = nextTail == null ? 0 : (int)(nextTail - pText);
            return rc;
        }
    }

    private nint ThrowIfDisposed(string call)
    {
        var db = _db;
        if (db == 0)
        {
            throw new ObjectDisposedException(
                nameof(PInvokeConnection), $"The SQLite connection to {Quoted.Path(_path)} is disposed; {call} cannot run on it.");
        }

        return db;
    }
}
