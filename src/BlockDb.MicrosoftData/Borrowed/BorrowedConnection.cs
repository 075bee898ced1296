using System.Data;
using System.Text;
using BlockDb.Drivers;
using BlockDb.Drivers.Native;
using Microsoft.Data.Sqlite;
using SQLitePCL;
using Kind = BlockDb.Drivers.Native.TransactionStatements.StatementKind;

namespace BlockDb.MicrosoftData.Borrowed;

/// <summary>
/// A caller's open Microsoft.Data.Sqlite connection, lent to BlockDb (<see cref="MicrosoftDataDriver.Borrow"/>).
/// BlockDb's statements run through SQLitePCL.raw on the caller's <c>sqlite3*</c>, so they run inside whatever
/// transaction the caller has open, with no <see cref="SqliteTransaction"/> object, and see the caller's uncommitted
/// rows. It never begins, commits or rolls back (X1, docs/ARCHITECTURE.md): such text is refused before SQLite sees it.
/// Disposing it finalizes only BlockDb's statements; the connection stays open and the caller's.
/// </summary>
/// <remarks>
/// When the caller closes its connection first, the <see cref="System.Data.Common.DbConnection.StateChange"/> event finalizes
/// BlockDb's statements at once, so SQLite's <c>sqlite3_close_v2</c> completes inside the caller's close and the file is
/// released then; every later call here throws <see cref="ObjectDisposedException"/>. The documented order is still:
/// dispose BlockDb, then close the connection.
/// </remarks>
internal sealed class BorrowedConnection : ILentSqliteConnection
{
    private readonly SqliteConnection _owner;
    private readonly sqlite3 _db;

    /// <summary>Guards <see cref="_statements"/> and the closed state: the caller may close its connection on another thread.</summary>
    private readonly Lock _gate = new();
    private readonly List<RawStatement> _statements = [];
    private string? _closedBy;

    internal BorrowedConnection(SqliteConnection owner)
    {
        _owner = owner;
        _db = owner.Handle ?? throw new InvalidOperationException("The connection has no SQLite handle; open it before lending it to BlockDb.");
        owner.StateChange += OnOwnerStateChange;
    }

    public ISqliteDriver Driver => MicrosoftDataDriver.Instance;

    public bool IsOpen => _closedBy is null && _owner.State == ConnectionState.Open;

    public bool InTransaction => raw.sqlite3_get_autocommit(Live(nameof(InTransaction))) == 0;

    public long LastInsertRowId => raw.sqlite3_last_insert_rowid(Live(nameof(LastInsertRowId)));

    /// <summary>The main database's file (<c>sqlite3_db_filename</c>); empty for an in-memory or temporary database.</summary>
    public string FileName => raw.sqlite3_db_filename(Live(nameof(FileName)), "main").utf8_to_string() ?? string.Empty;

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

    /// <summary>Runs each statement of <paramref name="sql"/> in turn; a transaction statement is refused before it runs (X1).</summary>
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
                do
                {
                    rc = raw.sqlite3_step(stmt);
                }
                while (rc == SqliteCodes.Row);

                if (rc != SqliteCodes.Done)
                {
                    throw RawErrors.FromConnection(db, rc, context);
                }
            }

            rest = tail;
        }
    }

    public string? QueryText(string sql)
    {
        ArgumentNullException.ThrowIfNull(sql);
        _ = Guard(sql, runsNow: true);
        var db = Live(nameof(QueryText));
        var context = $"QueryText of '{sql}'";
        using var stmt = PrepareSingle(db, sql, 0, context);
        var rc = raw.sqlite3_step(stmt);
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

    /// <summary>Finalizes BlockDb's statements; the caller's connection stays open.</summary>
    public void Dispose()
    {
        _owner.StateChange -= OnOwnerStateChange;
        Release("this borrowed connection was disposed");
    }

    internal void Forget(RawStatement statement)
    {
        lock (_gate)
        {
            _ = _statements.Remove(statement);
        }
    }

    /// <summary>Throws unless the caller's transaction is open: outside it a savepoint would begin one (X1).</summary>
    internal void RequireTransactionForSavepoint(string sql)
    {
        if (raw.sqlite3_get_autocommit(_db) != 0)
        {
            throw new InvalidOperationException(TransactionStatements.OutsideTransaction(sql));
        }
    }

    private void OnOwnerStateChange(object? sender, StateChangeEventArgs e)
    {
        if (e.CurrentState != ConnectionState.Open)
        {
            Release("the caller closed its connection");
        }
    }

    private void Release(string reason)
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

    /// <summary>Refuses a statement that begins or ends a transaction, and a savepoint that would run now outside the caller's transaction (X1); a prepared savepoint is checked at each run.</summary>
    private Kind Guard(string sql, bool runsNow)
    {
        var kind = TransactionStatements.Classify(sql);
        if (kind == Kind.Transaction)
        {
            throw new InvalidOperationException(TransactionStatements.Refusal(sql));
        }

        if (kind == Kind.Savepoint && runsNow)
        {
            RequireTransactionForSavepoint(sql);
        }

        return kind;
    }

    private sqlite3 Live(string call)
    {
        if (_closedBy is { } reason)
        {
            throw new ObjectDisposedException(nameof(BorrowedConnection), $"The borrowed SQLite connection cannot run {call}: {reason}.");
        }

        return _db;
    }

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
