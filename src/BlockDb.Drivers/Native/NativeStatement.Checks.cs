using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
namespace BlockDb.Drivers.Native;

// The state checks on the hot path (handle live, index in range, not busy, row present; StatementState in Drivers)
// and the errors they throw, kept out of line so the bind, step and column calls stay small.
internal sealed unsafe partial class NativeStatement
{
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

    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockDbException Failure(int rc, string call) =>
        SqliteErrors.FromConnection(_db, rc, $"{call} of statement '{Statement.Name}' failed");

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

    /// <summary>A step that neither gave a row nor finished: a first step that met a lock is retried as the connection says (<see cref="NativeConnection.RetryIfBusy"/>), anything else throws.</summary>
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
        if (_stmt != 0)
        {
            _ = SqliteNative.sqlite3_reset(_stmt);
        }

        _state.Cleared();
        GC.KeepAlive(this);
        return error;
    }

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
    private void ThrowDisposed(string call) => throw _state.Disposed(nameof(NativeStatement), call);
}
