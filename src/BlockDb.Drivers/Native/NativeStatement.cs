using System.Text;
using System.Text.Unicode;

namespace BlockDb.Drivers.Native;

/// <summary>
/// One <c>sqlite3_stmt*</c> BlockDb prepared on a <see cref="NativeConnection"/> (every SQLite provider's: PInvoke's own
/// <c>sqlite3*</c>, the one Microsoft.Data.Sqlite or System.Data.SQLite opened), owned by a
/// <see cref="SqliteStatementHandle"/> (finalized even when the caller forgets to dispose). Hot-path calls take the raw
/// handle cached in a field and allocate nothing: text and BLOBs are copied into a native buffer per parameter and bound
/// with <c>SQLITE_STATIC</c>. A first step that meets a lock is retried as the connection says
/// (<see cref="NativeConnection.RetryIfBusy"/>); a savepoint statement on a borrowed connection runs only inside the
/// caller's transaction (X1).
/// </summary>
internal sealed unsafe partial class NativeStatement : ISqliteStatement
{
    private readonly NativeConnection _connection;
    private readonly SqliteStatementHandle _handle;
    private readonly nint[] _buffers;
    private readonly int[] _capacities;
    private readonly nint _db;
    private readonly bool _isSavepoint;
    private nint _stmt;
    private StatementState _state;

    internal NativeStatement(NativeConnection connection, nint db, SqlStatement statement, SqliteStatementHandle handle, int columnCount, bool isSavepoint)
    {
        _connection = connection;
        Statement = statement;
        _handle = handle;
        _buffers = handle.Buffers;
        _capacities = handle.Capacities;
        _db = db;
        _isSavepoint = isSavepoint;
        _state = new StatementState(statement.Name, _buffers.Length, columnCount);
        _stmt = handle.DangerousGetHandle();
    }

    public SqlStatement Statement { get; }

    public void BindInt64(int index, long value)
    {
        var stmt = CheckBindable(index, nameof(BindInt64));
        var rc = SqliteNative.sqlite3_bind_int64(stmt, index, value);
        if (rc != SqliteCodes.Ok)
        {
            throw Failure(rc, nameof(BindInt64));
        }

        GC.KeepAlive(this);
    }

    public void BindDouble(int index, double value)
    {
        var stmt = CheckBindable(index, nameof(BindDouble));
        var rc = SqliteNative.sqlite3_bind_double(stmt, index, value);
        if (rc != SqliteCodes.Ok)
        {
            throw Failure(rc, nameof(BindDouble));
        }

        GC.KeepAlive(this);
    }

    public void BindText(int index, string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        var stmt = CheckBindable(index, nameof(BindText));
        var slot = index - 1;
        var worstCase = Encoding.UTF8.GetMaxByteCount(value.Length);
        var buffer = _buffers[slot];
        var capacity = _capacities[slot];
        if (buffer == 0 || capacity < worstCase)
        {
            // Size exactly only when the worst case is large; short text (hashes) gets a buffer that always fits.
            var needed = Encoding.UTF8.GetByteCount(value);
            (buffer, capacity) = SqliteStatementHandle.Reserve(needed, worstCase <= SqliteStatementHandle.WorstCaseBufferLimit ? worstCase : needed);
        }

        var byteCount = Encoding.UTF8.GetBytes(value, new Span<byte>((void*)buffer, capacity));
        BindBuffer(stmt, index, buffer, capacity, byteCount, text: true, nameof(BindText));
        GC.KeepAlive(this);
    }

    public void BindText(int index, ReadOnlySpan<byte> utf8)
    {
        if (!Utf8.IsValid(utf8))
        {
            throw new ArgumentException($"The text bound to parameter {index} of statement '{Statement.Name}' is not valid UTF-8 ({utf8.Length} bytes).", nameof(utf8));
        }

        BindBytes(CheckBindable(index, nameof(BindText)), index, utf8, text: true, nameof(BindText));
        GC.KeepAlive(this);
    }

    public void BindBlob(int index, ReadOnlySpan<byte> value)
    {
        BindBytes(CheckBindable(index, nameof(BindBlob)), index, value, text: false, nameof(BindBlob));
        GC.KeepAlive(this);
    }

    /// <summary>Copies <paramref name="value"/> into the parameter's native buffer and binds it there (<c>SQLITE_STATIC</c>) as UTF-8 text or a BLOB.</summary>
    private void BindBytes(nint stmt, int index, ReadOnlySpan<byte> value, bool text, string call)
    {
        var slot = index - 1;
        var buffer = _buffers[slot];
        var capacity = _capacities[slot];
        if (buffer == 0 || capacity < value.Length)
        {
            (buffer, capacity) = SqliteStatementHandle.Reserve(value.Length, value.Length);
        }

        value.CopyTo(new Span<byte>((void*)buffer, capacity));
        BindBuffer(stmt, index, buffer, capacity, value.Length, text, call);
    }

    /// <summary>Binds the first <paramref name="length"/> bytes of the parameter's native buffer (<c>SQLITE_STATIC</c>) and makes the slot own it.</summary>
    private void BindBuffer(nint stmt, int index, nint buffer, int capacity, int length, bool text, string call)
    {
        var rc = text
            ? SqliteNative.sqlite3_bind_text(stmt, index, (byte*)buffer, length, SqliteNative.SQLITE_STATIC)
            : SqliteNative.sqlite3_bind_blob(stmt, index, (byte*)buffer, length, SqliteNative.SQLITE_STATIC);
        _handle.Adopt(index - 1, buffer, capacity);
        if (rc != SqliteCodes.Ok)
        {
            throw Failure(rc, call);
        }
    }

    public void BindNull(int index)
    {
        var stmt = CheckBindable(index, nameof(BindNull));
        var rc = SqliteNative.sqlite3_bind_null(stmt, index);
        if (rc != SqliteCodes.Ok)
        {
            throw Failure(rc, nameof(BindNull));
        }

        GC.KeepAlive(this);
    }

    public bool Step()
    {
        var stmt = Runnable(nameof(Step));
        var first = !_state.Stepped;
        _state.BeginStep();
        var rc = SqliteNative.sqlite3_step(stmt);
        if (_state.EndStep(rc))
        {
            return true;
        }

        return rc == SqliteCodes.Done ? false : StepFailed(stmt, rc, first);
    }

    public int ColumnBlob(int column, Span<byte> destination)
    {
        var length = ReadBlob(CheckReadable(column, nameof(ColumnBlob)), column, destination);
        GC.KeepAlive(this);
        return length;
    }

    public long ColumnInt64(int column)
    {
        var stmt = CheckReadable(column, nameof(ColumnInt64));
        var value = SqliteNative.sqlite3_column_int64(stmt, column);
        GC.KeepAlive(this);
        return value;
    }

    public double ColumnDouble(int column)
    {
        var stmt = CheckReadable(column, nameof(ColumnDouble));
        var value = SqliteNative.sqlite3_column_double(stmt, column);
        GC.KeepAlive(this);
        return value;
    }

    public bool ColumnIsNull(int column)
    {
        var stmt = CheckReadable(column, nameof(ColumnIsNull));
        var isNull = SqliteNative.sqlite3_column_type(stmt, column) == SqliteCodes.NullType;
        GC.KeepAlive(this);
        return isNull;
    }

    public string? ColumnText(int column)
    {
        var stmt = CheckReadable(column, nameof(ColumnText));
        var value = NativeText.ReadColumn(_db, stmt, column, nameof(ColumnText), Statement.Name);
        GC.KeepAlive(this);
        return value;
    }

    public int ExecuteNonQuery() => Execute(Runnable(nameof(ExecuteNonQuery)), nameof(ExecuteNonQuery), countChanges: true);

    /// <summary>Steps <paramref name="stmt"/> to completion (a busy first step retried as the connection says), resets it and returns the rows it changed (0 unless <paramref name="countChanges"/>).</summary>
    private int Execute(nint stmt, string call, bool countChanges)
    {
        _state.BeginStep();
        var rc = SqliteNative.sqlite3_step(stmt);
        if (rc is not SqliteCodes.Row and not SqliteCodes.Done)
        {
            rc = _connection.RetryIfBusy(stmt, rc);
        }

        while (rc == SqliteCodes.Row)
        {
            rc = SqliteNative.sqlite3_step(stmt);
        }

        if (rc != SqliteCodes.Done)
        {
            throw StepFailure(rc, call);
        }

        var changes = countChanges ? SqliteNative.sqlite3_changes(_db) : 0;
        _ = SqliteNative.sqlite3_reset(stmt);
        _state.Cleared();
        GC.KeepAlive(this);
        return changes;
    }

    public void Reset()
    {
        var stmt = Live(nameof(Reset));

        // The result repeats the last step's error, which Step already reported.
        _ = SqliteNative.sqlite3_reset(stmt);
        _state.Cleared();
        GC.KeepAlive(this);
    }

    public void Dispose()
    {
        if (_stmt == 0)
        {
            return;
        }

        _connection.Forget(this);
        Release();
    }

    /// <summary>Finalizes the statement and frees its buffers (the connection calls this when it is released).</summary>
    internal void Release()
    {
        _stmt = 0;
        _state.Cleared();
        _handle.Dispose();
    }
}
