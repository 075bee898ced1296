using BlockDb.Engine;

namespace BlockDb.Sqlite;

// Savepoints inside the write transaction: the unit of a call that must go in whole or not at all.
internal sealed partial class SqliteTransaction
{
    /// <summary>
    /// Runs <paramref name="body"/> inside a savepoint: all of its writes, or (on failure or cancellation) none, with what
    /// it counted and the participant kept taken back. When the savepoint cannot be rolled back, the transaction is.
    /// </summary>
    /// <exception cref="BlockDbBatchRolledBackException">The rollback to the savepoint failed and the batch was rolled back with it.</exception>
    public TResult InSavepoint<TState, TResult>(TState state, Func<TState, TResult> body)
    {
        var (pending, mark) = (Pending, _participant?.SavepointMark ?? 0);
        _savepoint.ExecuteNonQuery();
        try
        {
            var result = body(state);
            _release.ExecuteNonQuery();
            return result;
        }
        catch (Exception e) when (_connection.InTransaction)
        {
            Revise();
            try
            {
                _rollbackTo.ExecuteNonQuery();
                _release.ExecuteNonQuery();
            }
            catch (BlockDbException undo) when (External)
            {
                // Never the caller's transaction [X1]: the call fails, and its step is undone after it [CommitPolicy.AfterFailedCall].
                throw Errors.StepUndoFailed(undo, e);
            }
            catch (BlockDbException undo)
            {
                var lost = Pending;
                Rollback();
                throw Errors.SavepointUndoFailed(undo, e, lost);
            }

            Pending = pending;
            _participant?.AfterRollbackTo(mark);
            throw;
        }
        catch
        {
            // SQLite ended the transaction itself (the call reports it [B2]): nothing of the savepoint is left to undo.
            Revise();
            throw;
        }
    }

    /// <summary>
    /// Runs <paramref name="body"/>, the writes of a call that made every check and refusal before them, with no savepoint
    /// of its own: a savepoint's writes make SQLite copy every page they first touch into the statement journal
    /// (<see href="https://www.sqlite.org/tempfiles.html"/>, "Statement Journal Files"), one random index page per new
    /// block. What fails among such writes is the engine (<c>SQLITE_FULL</c>, <c>SQLITE_IOERR</c>, a foreign trigger's
    /// <c>RAISE</c>), and the call's writes must not stay half done, so the open batch is rolled back with them and the
    /// call reports it (<see cref="BlockDbBatchRolledBackException"/>, as when SQLite itself ends the transaction after
    /// such an error). External: the call's step savepoint is its unit already [X1].
    /// </summary>
    /// <exception cref="BlockDbBatchRolledBackException"><paramref name="body"/> failed; the open batch was rolled back.</exception>
    public TResult WholeOrBatch<TState, TResult>(TState state, Func<TState, TResult> body)
    {
        if (External)
        {
            return AllOrNothing(state, body);
        }

        try
        {
            return body(state);
        }
        catch (Exception e) when (_connection.InTransaction)
        {
            var lost = Pending;
            try
            {
                Rollback("write-failed", e);
            }
            catch (BlockDbException)
            {
                // Ended here either way; the next write rolls back what SQLite still holds before it begins.
            }

            throw Errors.WritesFailedBatchRolledBack(e, lost);
        }
    }
}
