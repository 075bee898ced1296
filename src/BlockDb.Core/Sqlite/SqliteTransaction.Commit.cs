using System.Diagnostics;
using BlockDb.Diagnostics;
using BlockDb.Engine;

namespace BlockDb.Sqlite;

// Ending the write transaction: COMMIT and what its failure means [B3], a WAL that is no longer the database's (WalWatch), ROLLBACK.
internal sealed partial class SqliteTransaction
{
    /// <summary>Commits the open transaction, if any; else ends the read transaction.</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The commit failed: rolled back, or its outcome unknown [B3].</exception>
    /// <exception cref="InvalidOperationException">The transaction is the caller's (<see cref="EngineTransaction.External"/>).</exception>
    public void Commit()
    {
        if (External)
        {
            throw Errors.TransactionIsCallers(nameof(IBlockSession.CommitAsync));
        }

        if (!IsOpen)
        {
            Reads.End();
            return;
        }

        var pending = Pending;
        using var activity = Instruments.ActivitySource.StartActivity("blockdb.commit");
        activity?.SetTag("blockdb.commit.writes", pending);
        var started = Stopwatch.GetTimestamp();
        var committing = false;
        if (_wal is not null && !_wal.Unchanged())
        {
            RollBackForLostWal(pending);
        }

        try
        {
            _participant?.BeforeCommit();
            committing = true;
            _commit!.ExecuteNonQuery();
        }
        catch (BlockDbException e)
        {
            _metrics.Rolled("failed", pending, e);

            // SQLITE_BUSY leaves the transaction open (nothing was written): rolled back below, certainly lost. Any
            // other failure that ended the transaction may have come after the commit point (in rollback-journal
            // modes, deleting the journal after the database file was written): then the outcome is unknown [B3].
            var stillOpen = _connection.InTransaction;
            var unknown = committing && !stillOpen && !e.IsTransient;
            BlockDbException? rollbackFailure = null;
            try
            {
                if (stillOpen)
                {
                    _rollback!.ExecuteNonQuery();
                }
            }
            catch (BlockDbException r)
            {
                // Reported with the commit's failure, never instead of it; Begin ends a transaction left open.
                rollbackFailure = r;
            }
            finally
            {
                End(committed: false);
            }

            throw Errors.CommitFailed(e, pending, unknown, rollbackFailure);
        }

        End(committed: true);
        _metrics.Committed(pending, Stopwatch.GetElapsedTime(started));
    }

    /// <summary>The WAL this connection writes to is no longer the database's (<see cref="WalWatch"/>): a <c>COMMIT</c> would be acknowledged and lost, so roll back and say why.</summary>
    private void RollBackForLostWal(int pending)
    {
        try
        {
            if (_connection.InTransaction)
            {
                _rollback!.ExecuteNonQuery();
            }
        }
        catch (BlockDbException)
        {
            // Begin ends a transaction left open; the caller must learn about the WAL, not about this.
        }
        finally
        {
            End(committed: false);
        }

        var cause = Errors.WalLost(_wal!.WalPath);
        _metrics.Rolled("wal-lost", pending, cause);
        throw Errors.BatchRolledBackForLostWal(cause, pending);
    }

    /// <summary>Rolls the open transaction back, if any; else abandons the read transaction. <paramref name="reason"/> and <paramref name="cause"/> go to the rollbacks metric.</summary>
    /// <exception cref="InvalidOperationException">The transaction is the caller's (<see cref="EngineTransaction.External"/>).</exception>
    public void Rollback(string reason = "requested", Exception? cause = null)
    {
        if (External)
        {
            throw Errors.TransactionIsCallers(nameof(IBlockSession.RollbackAsync));
        }

        if (!IsOpen)
        {
            Reads.Abandon();
            return;
        }

        var pending = Pending;
        try
        {
            if (_connection.InTransaction)
            {
                _rollback!.ExecuteNonQuery();
            }
        }
        finally
        {
            End(committed: false);
            _metrics.Rolled(reason, pending, cause);
        }
    }
}
