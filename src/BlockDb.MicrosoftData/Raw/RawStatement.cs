using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Text;
using BlockDb.Drivers;
using BlockDb.Drivers.Native;
using SQLitePCL;

namespace BlockDb.MicrosoftData.Raw;

/// <summary>
/// One statement BlockDb prepared on a Microsoft.Data.Sqlite connection (<see cref="RawConnection"/>: the driver's own or a
/// caller's): it runs in whatever transaction is open. Its <c>sqlite3_stmt</c> is a SQLitePCL
/// <see cref="System.Runtime.InteropServices.SafeHandle"/>, finalized even when nobody disposes it; the per-row calls go to
/// <c>e_sqlite3</c> with its pointer (<see cref="RawNative"/>) while it is live. Text and BLOBs are bound as copies
/// (<c>SQLITE_TRANSIENT</c>) from a stack buffer, so a bind allocates nothing.
/// </summary>
internal sealed partial class RawStatement : ISqliteStatement, IBlockInsertStatement
{
    /// <summary>Text up to this many UTF-8 bytes (worst case) is encoded on the stack; longer text in a pooled array.</summary>
    private const int StackTextBytes = 512;

    private readonly RawConnection _connection;
    private readonly sqlite3 _db;
    private readonly bool _isSavepoint;
    private sqlite3_stmt? _stmt;

    /// <summary><see cref="_stmt"/>'s pointer while the statement is live, 0 once it is released.</summary>
    private nint _handle;
    private StatementState _state;

    internal RawStatement(RawConnection connection, sqlite3 db, SqlStatement statement, sqlite3_stmt stmt, int parameters, int columns, bool isSavepoint)
    {
        _connection = connection;
        _db = db;
        Statement = statement;
        _stmt = stmt;
        _handle = stmt.DangerousGetHandle();
        _isSavepoint = isSavepoint;
        _state = new StatementState(statement.Name, parameters, columns);
    }

    public SqlStatement Statement { get; }

    public void BindInt64(int index, long value)
    {
        var stmt = CheckBindable(index, nameof(BindInt64));
        Check(RawNative.sqlite3_bind_int64(stmt, index, value), nameof(BindInt64));
    }

    public void BindDouble(int index, double value)
    {
        var stmt = CheckBindable(index, nameof(BindDouble));
        Check(RawNative.sqlite3_bind_double(stmt, index, value), nameof(BindDouble));
    }

    public void BindText(int index, string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        var stmt = CheckBindable(index, nameof(BindText));
        var worstCase = Encoding.UTF8.GetMaxByteCount(value.Length);
        byte[]? rented = null;

        var buffer = worstCase < StackTextBytes ? stackalloc byte[StackTextBytes] : (rented = ArrayPool<byte>.Shared.Rent(worstCase + 1));
        try
        {
            var length = Encoding.UTF8.GetBytes(value, buffer);
            buffer[length] = 0;

            Check(RawNative.BindText(stmt, index, buffer, length), nameof(BindText));
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    public void BindBlob(int index, ReadOnlySpan<byte> value)
    {
        var stmt = CheckBindable(index, nameof(BindBlob));

        // A null pointer would bind SQL NULL; an empty BLOB is a zero-length zeroblob.
        var rc = value.IsEmpty ? RawNative.sqlite3_bind_zeroblob(stmt, index, 0) : RawNative.BindBlob(stmt, index, value);
        Check(rc, nameof(BindBlob));
    }

    /// <summary>
    /// Binds a <c>Block</c> row and runs the insert in one call (<see cref="IBlockInsertStatement"/>): the state checked
    /// once, then the same native calls as the four binds and <see cref="ExecuteNonQuery"/>.
    /// </summary>
    public void InsertBlock(long id, ReadOnlySpan<byte> hash, long size, long? volumeId)
    {
        var stmt = CheckBindable(4, nameof(InsertBlock));
        var rc = RawNative.sqlite3_bind_int64(stmt, 1, id);
        if (rc == SqliteCodes.Ok)
        {
            rc = hash.IsEmpty ? RawNative.sqlite3_bind_zeroblob(stmt, 2, 0) : RawNative.BindBlob(stmt, 2, hash);
        }

        if (rc == SqliteCodes.Ok)
        {
            rc = RawNative.sqlite3_bind_int64(stmt, 3, size);
        }

        if (rc == SqliteCodes.Ok)
        {
            rc = volumeId is { } volume ? RawNative.sqlite3_bind_int64(stmt, 4, volume) : RawNative.sqlite3_bind_null(stmt, 4);
        }

        Check(rc, nameof(InsertBlock));
        _ = Execute(stmt, nameof(InsertBlock), countChanges: false);
    }

    public void BindNull(int index)
    {
        var stmt = CheckBindable(index, nameof(BindNull));
        Check(RawNative.sqlite3_bind_null(stmt, index), nameof(BindNull));
    }

    public bool Step()
    {
        var stmt = Runnable(nameof(Step));
        var first = !_state.Stepped;
        _state.BeginStep();
        var rc = RawNative.sqlite3_step(stmt);
        if (_state.EndStep(rc))
        {
            return true;
        }

        return rc == SqliteCodes.Done ? false : StepFailed(stmt, rc, first);
    }

    public int ExecuteNonQuery() => Execute(Runnable(nameof(ExecuteNonQuery)), nameof(ExecuteNonQuery), countChanges: true);

    public void Reset()
    {
        var stmt = Live(nameof(Reset));

        // The result repeats the last step's error, which Step already reported.
        _ = RawNative.sqlite3_reset(stmt);
        _state.Cleared();
    }

    public void Dispose()
    {
        if (_handle == 0)
        {
            return;
        }

        _connection.Forget(this);
        Release();
    }

    /// <summary>Finalizes the statement (the connection calls this on its own dispose, and when the caller closes its connection).</summary>
    internal void Release()
    {
        var stmt = _stmt;
        _handle = 0;
        _stmt = null;
        _state.Cleared();
        stmt?.Dispose();
    }

    /// <summary>Steps <paramref name="stmt"/> to completion (a busy first step retried as the connection says) and resets it; the changed rows when asked.</summary>
    private int Execute(nint stmt, string call, bool countChanges)
    {
        _state.BeginStep();
        var rc = RawNative.sqlite3_step(stmt);
        if (rc is not SqliteCodes.Row and not SqliteCodes.Done)
        {
            rc = _connection.RetryIfBusy(stmt, rc);
        }

        while (rc == SqliteCodes.Row)
        {
            rc = RawNative.sqlite3_step(stmt);
        }

        if (rc != SqliteCodes.Done)
        {
            throw StepFailure(rc, call);
        }

        var changes = countChanges ? RawNative.sqlite3_changes(_connection.Pointer) : 0;
        _ = RawNative.sqlite3_reset(stmt);
        _state.Cleared();
        return changes;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private nint CheckBindable(int index, string call)
    {
        var stmt = Live(call);
        _state.CheckBindable(index, call);
        return stmt;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private nint CheckReadable(int column, string call)
    {
        var stmt = Live(call);
        _state.CheckReadable(column, call);
        return stmt;
    }

    /// <summary>The handle for a step; a savepoint statement runs only inside the caller's transaction (X1).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private nint Runnable(string call)
    {
        var stmt = Live(call);
        if (_isSavepoint)
        {
            _connection.RequireTransactionForSavepoint(Statement.Text);
        }

        return stmt;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private nint Live(string call)
    {
        var stmt = _handle;
        if (stmt == 0)
        {
            ThrowDisposed(call);
        }

        return stmt;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Check(int rc, string call)
    {
        if (rc != SqliteCodes.Ok)
        {
            throw Failure(rc, call);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException Failure(int rc, string call) =>
        RawErrors.FromConnection(_db, rc, $"{call} of statement '{Statement.Name}' failed");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException OutOfMemory(string call) =>
        RawErrors.FromConnection(_db, SqliteCodes.NoMem, $"{call} of statement '{Statement.Name}'");

    /// <summary>A step that neither gave a row nor finished: a first step that met a lock is retried as the connection says (<see cref="RawConnection.RetryIfBusy"/>), anything else throws.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool StepFailed(nint stmt, int rc, bool first)
    {
        if (first)
        {
            rc = _connection.RetryIfBusy(stmt, rc);
            if (_state.EndStep(rc))
            {
                return true;
            }

            if (rc == SqliteCodes.Done)
            {
                return false;
            }
        }

        throw StepFailure(rc, nameof(Step));
    }

    /// <summary>Builds the step error, then resets the statement so it can run again.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException StepFailure(int rc, string call)
    {
        var error = Failure(rc, call);
        if (_handle is not 0 and var stmt)
        {
            _ = RawNative.sqlite3_reset(stmt);
        }

        _state.Cleared();
        return error;
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowDisposed(string call) => throw _state.Disposed(nameof(RawStatement), call);
}
