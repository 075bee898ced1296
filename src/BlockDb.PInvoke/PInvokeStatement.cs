using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using BlockDb.Drivers;

namespace BlockDb.PInvoke;

/// <summary>
/// One <c>sqlite3_stmt*</c>, owned by a <see cref="SqliteStatementHandle"/> (finalized even when the caller
/// forgets to dispose). Hot-path calls take the raw handle cached in a field and allocate nothing: text is
/// encoded into a native buffer per parameter and bound with <c>SQLITE_STATIC</c>.
/// </summary>
internal sealed unsafe class PInvokeStatement : ISqliteStatement
{
    /// <summary>Small strings get a buffer of their worst-case UTF-8 size, so later binds skip the byte count.</summary>
    private const int WorstCaseBufferLimit = 1024;

    private const int MinimumBufferSize = 16;

    private readonly PInvokeConnection _connection;
    private readonly SqliteStatementHandle _handle;
    private readonly nint[] _buffers;
    private readonly int[] _capacities;
    private readonly nint _db;
    private readonly int _columnCount;
    private nint _stmt;

    /// <summary>Stepped since the last reset: SQLite may still read the bound buffers, so binding is refused.</summary>
    private bool _busy;

    /// <summary>The last step returned a row, so columns can be read.</summary>
    private bool _hasRow;

    internal PInvokeStatement(PInvokeConnection connection, SqlStatement statement, SqliteStatementHandle handle, int columnCount)
    {
        _connection = connection;
        Statement = statement;
        _handle = handle;
        _buffers = handle.Buffers;
        _capacities = handle.Capacities;
        _db = connection.Db;
        _columnCount = columnCount;
        _stmt = handle.DangerousGetHandle();
    }

    public SqlStatement Statement { get; }

    public void BindInt64(int index, long value)
    {
        var stmt = CheckBindable(index, nameof(BindInt64));
        var rc = NativeMethods.sqlite3_bind_int64(stmt, index, value);
        if (rc != NativeMethods.SQLITE_OK)
        {
            throw Failure(rc, nameof(BindInt64));
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
            (buffer, capacity) = Reserve(needed, worstCase <= WorstCaseBufferLimit ? worstCase : needed);
        }

        var byteCount = Encoding.UTF8.GetBytes(value, new Span<byte>((void*)buffer, capacity));
        var rc = NativeMethods.sqlite3_bind_text(stmt, index, (byte*)buffer, byteCount, NativeMethods.SQLITE_STATIC);
        Adopt(slot, buffer, capacity);
        if (rc != NativeMethods.SQLITE_OK)
        {
            throw Failure(rc, nameof(BindText));
        }

        GC.KeepAlive(this);
    }

    public void BindBlob(int index, ReadOnlySpan<byte> value)
    {
        var stmt = CheckBindable(index, nameof(BindBlob));
        var slot = index - 1;
        var buffer = _buffers[slot];
        var capacity = _capacities[slot];
        if (buffer == 0 || capacity < value.Length)
        {
            (buffer, capacity) = Reserve(value.Length, value.Length);
        }

        value.CopyTo(new Span<byte>((void*)buffer, capacity));
        var rc = NativeMethods.sqlite3_bind_blob(stmt, index, (byte*)buffer, value.Length, NativeMethods.SQLITE_STATIC);
        Adopt(slot, buffer, capacity);
        if (rc != NativeMethods.SQLITE_OK)
        {
            throw Failure(rc, nameof(BindBlob));
        }

        GC.KeepAlive(this);
    }

    public void BindNull(int index)
    {
        var stmt = CheckBindable(index, nameof(BindNull));
        var rc = NativeMethods.sqlite3_bind_null(stmt, index);
        if (rc != NativeMethods.SQLITE_OK)
        {
            throw Failure(rc, nameof(BindNull));
        }

        GC.KeepAlive(this);
    }

    public bool Step()
    {
        var stmt = _stmt;
        if (stmt == 0)
        {
            ThrowDisposed(nameof(Step));
        }

        _busy = true;
        var rc = NativeMethods.sqlite3_step(stmt);
        if (rc == NativeMethods.SQLITE_ROW)
        {
            _hasRow = true;
            return true;
        }

        _hasRow = false;
        if (rc == NativeMethods.SQLITE_DONE)
        {
            return false;
        }

        throw StepFailure(rc, nameof(Step));
    }

    public int ColumnBlob(int column, Span<byte> destination)
    {
        var stmt = CheckReadable(column, nameof(ColumnBlob));
        if (NativeMethods.sqlite3_column_type(stmt, column) == NativeMethods.SQLITE_NULL)
        {
            GC.KeepAlive(this);
            return -1;
        }

        var bytes = NativeMethods.sqlite3_column_blob(stmt, column);
        var length = NativeMethods.sqlite3_column_bytes(stmt, column);
        if (bytes == null && length > 0)
        {
            // Not NULL and not empty, so SQLite failed to convert the value (out of memory).
            throw SqliteErrors.FromConnection(_db, 7, $"ColumnBlob of statement '{Statement.Name}'");
        }

        new ReadOnlySpan<byte>(bytes, Math.Min(length, destination.Length)).CopyTo(destination);
        GC.KeepAlive(this);
        return length;
    }

    public long ColumnInt64(int column)
    {
        var stmt = CheckReadable(column, nameof(ColumnInt64));
        var value = NativeMethods.sqlite3_column_int64(stmt, column);
        GC.KeepAlive(this);
        return value;
    }

    public string? ColumnText(int column)
    {
        var stmt = CheckReadable(column, nameof(ColumnText));
        var value = ReadText(_db, stmt, column, $"ColumnText of statement '{Statement.Name}'");
        GC.KeepAlive(this);
        return value;
    }

    public int ExecuteNonQuery()
    {
        var stmt = _stmt;
        if (stmt == 0)
        {
            ThrowDisposed(nameof(ExecuteNonQuery));
        }

        _busy = true;
        _hasRow = false;
        int rc;
        do
        {
            rc = NativeMethods.sqlite3_step(stmt);
        }
        while (rc == NativeMethods.SQLITE_ROW);

        if (rc != NativeMethods.SQLITE_DONE)
        {
            throw StepFailure(rc, nameof(ExecuteNonQuery));
        }

        var changes = NativeMethods.sqlite3_changes(_db);
        _ = NativeMethods.sqlite3_reset(stmt);
        _busy = false;
        GC.KeepAlive(this);
        return changes;
    }

    public void Reset()
    {
        var stmt = _stmt;
        if (stmt == 0)
        {
            ThrowDisposed(nameof(Reset));
        }

        // The result repeats the last step's error, which Step already reported.
        _ = NativeMethods.sqlite3_reset(stmt);
        _busy = false;
        _hasRow = false;
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

    /// <summary>Finalizes the statement and frees its text buffers (the connection calls this on its own dispose).</summary>
    internal void Release()
    {
        _stmt = 0;
        _busy = false;
        _hasRow = false;
        _handle.Dispose();
    }

    /// <summary>Reads a column as text: <see langword="null"/> for SQL NULL, else its UTF-8 bytes decoded.</summary>
    internal static string? ReadText(nint db, nint stmt, int column, string context)
    {
        if (NativeMethods.sqlite3_column_type(stmt, column) == NativeMethods.SQLITE_NULL)
        {
            return null;
        }

        var text = NativeMethods.sqlite3_column_text(stmt, column);
        var length = NativeMethods.sqlite3_column_bytes(stmt, column);
        if (text == null)
        {
            // Not NULL, so SQLite failed to convert the value (out of memory).
            var rc = NativeMethods.sqlite3_errcode(db);
            throw SqliteErrors.FromConnection(db, rc == NativeMethods.SQLITE_OK ? 7 : rc, context);
        }

        return Encoding.UTF8.GetString(text, length);
    }

    /// <summary>A new native buffer of at least <paramref name="needed"/> bytes for a bind; the slot keeps its old one until <see cref="Adopt"/>.</summary>
    private static (nint Buffer, int Capacity) Reserve(int needed, int preferred)
    {
        var capacity = Math.Max(MinimumBufferSize, Math.Max(needed, preferred));
        return ((nint)NativeMemory.Alloc((nuint)capacity), capacity);
    }

    /// <summary>After a bind: the statement points at <paramref name="buffer"/>, so the slot owns it and the buffer it replaced is freed.</summary>
    private void Adopt(int slot, nint buffer, int capacity)
    {
        var old = _buffers[slot];
        if (buffer == old)
        {
            return;
        }

        _buffers[slot] = buffer;
        _capacities[slot] = capacity;
        if (old != 0)
        {
            NativeMemory.Free((void*)old);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private nint CheckBindable(int index, string call)
    {
        var stmt = _stmt;
        if (stmt == 0)
        {
            ThrowDisposed(call);
        }

        if ((uint)(index - 1) >= (uint)_buffers.Length)
        {
            throw ParameterOutOfRange(index, call);
        }

        if (_busy)
        {
            throw BindWhileBusy(call);
        }

        return stmt;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private nint CheckReadable(int column, string call)
    {
        var stmt = _stmt;
        if (stmt == 0)
        {
            ThrowDisposed(call);
        }

        if (!_hasRow || (uint)column >= (uint)_columnCount)
        {
            throw NotReadable(column, call);
        }

        return stmt;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException Failure(int rc, string call) =>
        SqliteErrors.FromConnection(_db, rc, $"{call} of statement '{Statement.Name}' failed");

    /// <summary>Builds the step error, then resets the statement so it can run again.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException StepFailure(int rc, string call)
    {
        var error = Failure(rc, call);
        _ = NativeMethods.sqlite3_reset(_stmt);
        _busy = false;
        _hasRow = false;
        GC.KeepAlive(this);
        return error;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException ParameterOutOfRange(int index, string call) => new(
        $"{call} of statement '{Statement.Name}' failed: parameter index {index} is out of range; the statement has {_buffers.Length} parameter(s), numbered from 1.",
        NativeMethods.SQLITE_RANGE,
        NativeMethods.SQLITE_RANGE);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException BindWhileBusy(string call) => new(
        $"{call} of statement '{Statement.Name}' failed: the statement was stepped and not reset; call Reset before binding new values.",
        NativeMethods.SQLITE_MISUSE,
        NativeMethods.SQLITE_MISUSE);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException NotReadable(int column, string call) => new(
        _hasRow
            ? $"{call} of statement '{Statement.Name}' failed: column index {column} is out of range; the statement has {_columnCount} column(s), numbered from 0."
            : $"{call} of statement '{Statement.Name}' failed: there is no current row; read columns only after Step returns true.",
        _hasRow ? NativeMethods.SQLITE_RANGE : NativeMethods.SQLITE_MISUSE,
        _hasRow ? NativeMethods.SQLITE_RANGE : NativeMethods.SQLITE_MISUSE);

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowDisposed(string call) => throw new ObjectDisposedException(
        nameof(PInvokeStatement), $"Statement '{Statement.Name}' is disposed (or its connection is); {call} cannot run on it.");
}
