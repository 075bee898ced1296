namespace BlockDb.Shared;

/// <summary>
/// PostgreSQL's write route: each write on a session of the shared session's <see cref="SessionPool"/>, whose
/// sessions write with <see cref="BatchingOptions.CommitEvery"/> = 1 (autocommit), so a write returns once its own
/// transaction has committed and concurrent writers are served by the server's own concurrency (row locks on the unique
/// index, WAL flushes shared by concurrent commits). Measured faster than one group-commit writer connection
/// (docs/BENCHMARKS.md, "PostgreSQL").
/// </summary>
/// <remarks>The pool is the shared session's (reads and writes share its bound); the shared session disposes it.</remarks>
internal sealed class PooledWrites(SessionPool sessions) : IWriteRoute
{
    private long _acknowledged;

    /// <summary>One per acknowledged write: each commits on its own.</summary>
    public long CommittedBatches => Interlocked.Read(ref _acknowledged);

    public long AcknowledgedWrites => Interlocked.Read(ref _acknowledged);

    public int QueueLength => 0;

    /// <summary>
    /// Runs the write on a lent session. The caller gets the request's own task, completed before the session goes back
    /// to the pool: the pool's dispose waits for every lease, so once the shared session's dispose returns no write
    /// it let through is still pending [S3] (an async method's own task would complete only after its lease had gone
    /// back, on a thread that may not have run yet).
    /// </summary>
    public ValueTask<TResult> WriteAsync<TResult>(WriteRequest<TResult> request)
    {
        var task = request.Task;
        _ = RunAsync(request);
        return new(task);
    }

    /// <summary>Rents a session, runs the write and completes or fails the request, then gives the session back; never throws.</summary>
    private async Task RunAsync(WriteRequest request)
    {
        try
        {
            using (var lease = await sessions.RentAsync(request.CancellationToken).ConfigureAwait(false))
            {
                await request.RunAsync(lease.Session).ConfigureAwait(false);
                if (request.Writes > 0)
                {
                    Interlocked.Add(ref _acknowledged, request.Writes);
                }

                request.Complete();
            }
        }
        catch (Exception e)
        {
            request.Fail(e);
        }
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;
}
