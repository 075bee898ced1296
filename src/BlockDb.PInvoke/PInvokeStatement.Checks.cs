using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace BlockDb.PInvoke;

// The state checks on the hot path (handle live, index in range, not busy, row present) and the errors they throw,
// kept out of line so the bind, step and column calls stay small.
internal sealed unsafe partial class PInvokeStatement
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private nint CheckBindable(int index, string call)
    {
        var stmt = Live(call);

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
        var stmt = Live(call);

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
    private BlockDbException ParameterOutOfRange(int index, string call) => StatementErrors.ParameterOutOfRange(Statement.Name, index, _buffers.Length, call);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException BindWhileBusy(string call) => StatementErrors.BindWhileBusy(Statement.Name, call);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException NotReadable(int column, string call) => StatementErrors.NotReadable(Statement.Name, _hasRow, column, _columnCount, call);

    /// <summary>The statement handle, or <see cref="ObjectDisposedException"/> naming <paramref name="call"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private nint Live(string call)
    {
        var stmt = _stmt;
        if (stmt == 0)
        {
            ThrowDisposed(call);
        }

        return stmt;
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowDisposed(string call) => throw new ObjectDisposedException(
        nameof(PInvokeStatement), $"Statement '{Statement.Name}' is disposed (or its connection is); {call} cannot run on it.");
}
