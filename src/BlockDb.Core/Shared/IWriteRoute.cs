namespace BlockDb.Shared;

/// <summary>
/// How the shared session's writes reach the engine, chosen by the engine: SQLite's <see cref="GroupCommitWriter"/>
/// (one writer session, concurrent callers gathered into one commit), PostgreSQL's gathered writes (PgGatheredWrites:
/// lanes sending what is queued as one batch [S4]) over <see cref="PooledWrites"/> (each other write on a pooled
/// session, committing on its own). Either way a write's task completes only after its commit [S1].
/// </summary>
internal interface IWriteRoute
{
    /// <summary>Transactions committed with at least one write.</summary>
    long CommittedBatches { get; }

    /// <summary>Writes acknowledged.</summary>
    long AcknowledgedWrites { get; }

    /// <summary>Writes waiting for the writer now (<c>blockdb.group_commit.queue_length</c>); 0 when nothing queues.</summary>
    int QueueLength { get; }

    /// <summary>Runs <paramref name="request"/>; its task completes with the result once the write has committed.</summary>
    ValueTask<TResult> WriteAsync<TResult>(WriteRequest<TResult> request);

    /// <summary>Stops taking writes and lets those taken commit [S3].</summary>
    ValueTask DisposeAsync();
}
