using BlockDb.Engine;

namespace BlockDb.Import;

/// <summary>
/// A SQLite bulk import's target: a session of its own that never commits by itself (<c>CommitEvery = 0</c>, so an
/// import transaction is exactly what <see cref="BulkImport"/> cuts) and rolls back what is not committed when disposed.
/// Reads are not batched on it: every read runs inside its write transaction.
/// </summary>
internal sealed class SessionImportTarget(ISessionHandle session) : IImportTarget
{
    /// <summary>The import session's batching.</summary>
    public static readonly BatchingOptions Batching = new() { CommitEvery = 0, CommitAfterMilliseconds = null, OnDispose = DisposeBehavior.Rollback, ReadsPerTransaction = 1 };

    private SelectXorInsertResult[] _results = new SelectXorInsertResult[1024];

    public ValueTask<int> AddBlocksAsync(ReadOnlyMemory<BlockKey> blocks, long? volumeId, CancellationToken cancellationToken)
    {
        if (_results.Length < blocks.Length)
        {
            _results = new SelectXorInsertResult[blocks.Length];
        }

        return session.SelectXorInsertManyAsync(blocks, _results, volumeId, cancellationToken);
    }

    public ValueTask<bool> AddBlocksetAsync(ImportBlockset blockset, long length, CancellationToken cancellationToken) =>
        session.ImportBlocksetAsync(blockset, length, cancellationToken);

    public ValueTask CommitAsync(CancellationToken cancellationToken) => session.CommitAsync(cancellationToken);

    public ValueTask DisposeAsync() => session.DisposeAsync();
}
