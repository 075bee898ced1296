namespace BlockDb.Shared;

/// <summary>
/// PostgreSQL's write route: each write on a session of the shared repository's <see cref="SessionPool"/>, whose
/// sessions write with <see cref="BatchingOptions.CommitEvery"/> = 1 (autocommit), so a write returns once its own
/// transaction has committed and concurrent writers are served by the server's own concurrency (row locks on the unique
/// index, WAL flushes shared by concurrent commits). Measured faster than one group-commit writer connection
/// (docs/BENCHMARKS.md, "PostgreSQL").
/// </summary>
/// <remarks>The pool is the shared repository's (reads and writes share its bound); the repository disposes it.</remarks>
internal sealed class PooledWrites(SessionPool sessions) : IWriteRoute
{
    private long _acknowledged;

    /// <summary>One per acknowledged write: each commits on its own.</summary>
    public long CommittedBatches => Interlocked.Read(ref _acknowledged);

    public long AcknowledgedWrites => Interlocked.Read(ref _acknowledged);

    public int QueueLength => 0;

    public async ValueTask<TResult> WriteAsync<TResult>(WriteRequest<TResult> request)
    {
        using var lease = await sessions.RentAsync(request.CancellationToken).ConfigureAwait(false);
        await request.RunAsync(lease.Session).ConfigureAwait(false);
        if (request.Writes > 0)
        {
            Interlocked.Add(ref _acknowledged, request.Writes);
        }

        return request.Result!;
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;
}
