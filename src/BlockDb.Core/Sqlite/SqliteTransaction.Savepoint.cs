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
}
