using BlockDb.Engine;

namespace BlockDb.Sqlite;

// External mode: the call's step inside the caller's transaction, opened, released or undone by BlockDb [X1, X2].
internal sealed partial class SqliteTransaction
{
    /// <summary>
    /// As <see cref="Begin"/>, for a call whose writes are one atomic unit: one statement, or one <see cref="InSavepoint"/>.
    /// In External mode it opens the call's step without the savepoint <c>"BlockDbStep"</c>: a failed statement is backed
    /// out by SQLite itself (<see href="https://www.sqlite.org/lang_conflict.html"/>: ABORT undoes the statement's changes,
    /// and a single-row write has nothing else to undo), and a savepoint undoes itself, so nothing of the call can stay after
    /// it fails [X1]. A second write in the same call is refused (<see cref="Begin"/>). Outside External mode, <see cref="Begin"/>.
    /// </summary>
    /// <exception cref="BlockDbBatchRolledBackException">As <see cref="Begin"/>.</exception>
    /// <exception cref="InvalidOperationException">External: the caller's transaction is not open [X2].</exception>
    public void BeginForOneWrite()
    {
        if (External && !IsOpen)
        {
            BeginStep(savepoint: false);
            return;
        }

        Begin();
    }

    /// <summary>
    /// Runs <paramref name="body"/> so that all of its writes stay or none: in a savepoint (<see cref="InSavepoint"/>), except
    /// in External mode inside a call's step savepoint, which is that unit already: a failure of <paramref name="body"/>
    /// unwinds through the call, which rolls back to its step [X1]. Only for a body whose failure fails the call (no code
    /// of the call catches it and goes on writing).
    /// </summary>
    /// <exception cref="BlockDbBatchRolledBackException">As <see cref="InSavepoint"/>.</exception>
    public TResult AllOrNothing<TState, TResult>(TState state, Func<TState, TResult> body) =>
        External && IsOpen && _stepSavepoint ? body(state) : InSavepoint(state, body);

    /// <summary>External: opens the call's step inside the caller's transaction, with <paramref name="savepoint"/> a savepoint [X1, X2].</summary>
    private void BeginStep(bool savepoint)
    {
        if (!_connection.InTransaction)
        {
            throw Errors.NoCallerTransaction();
        }

        if (savepoint)
        {
            _stepBegin!.ExecuteNonQuery();
        }

        _stepSavepoint = savepoint;
        Transaction++;
        MarkOpened(notify: false);
    }

    /// <summary>External, after a call that succeeded: releases its step, so its writes stay in the caller's transaction (a release of a nested savepoint commits nothing).</summary>
    public override void ReleaseStep()
    {
        if (!IsOpen)
        {
            return;
        }

        if (_stepSavepoint)
        {
            _stepRelease!.ExecuteNonQuery();
        }

        End(committed: true);
    }

    /// <summary>
    /// External, after a call that failed: undoes its step (nothing of the call stays in the caller's transaction) and
    /// releases it. Returns the failure to report: <paramref name="failure"/>, or the undo's own failure when the call's
    /// writes could not be undone (the caller must then roll back).
    /// </summary>
    public override Exception UndoStep(Exception failure)
    {
        if (!IsOpen)
        {
            return failure;
        }

        try
        {
            Revise();
            if (_stepSavepoint && _connection.InTransaction)
            {
                // Without the savepoint, the call's one write undid itself when it failed (BeginForOneWrite).
                _stepUndo!.ExecuteNonQuery();
                _stepRelease!.ExecuteNonQuery();
            }

            return failure;
        }
        catch (BlockDbException undo)
        {
            return Errors.StepUndoFailed(undo, failure);
        }
        catch (ObjectDisposedException)
        {
            // The caller closed its connection: its transaction, and the step in it, went with it.
            return failure;
        }
        finally
        {
            End(committed: false);
        }
    }
}
