using BlockDb.Backup.Hashing;
using BlockDb.Backup.Sidecar;
using Microsoft.Extensions.Logging;

namespace BlockDb.Backup.Indexing;

/// <summary>
/// Records hashed files through the one repository session: <c>SelectXorInsertAsync</c> for each block, then
/// <c>AddBlocksetAsync(blockIds, fullHash)</c>. A file's sidecar line is written only once its blockset is committed
/// (the session's <c>PendingWrites</c> is back to 0 after a call), so the sidecar never names a blockset that a
/// rollback or a crash took away. Single-threaded, as a session is.
/// </summary>
internal sealed class IndexWriter(IBlockRepository repository, IndexStats stats, TextWriter sidecar, BlockRecorder? recorder, ILogger logger)
{
    private readonly List<long> _blockIds = new(1024);
    private readonly List<FileMapEntry> _uncommitted = [];
    private long _fileIndex;

    public async ValueTask WriteAsync(HashedFile file, CancellationToken cancellationToken)
    {
        if (file.IsUnreadable)
        {
            logger.LogWarning("Skipped unreadable file {Path}: {Error}", file.Path, file.Error);
            stats.AddUnreadable();
            return;
        }

        if (file.Blocks.Count == 0)
        {
            stats.AddEmpty();
            return;
        }

        _blockIds.Clear();
        foreach (var block in file.Blocks)
        {
            var result = await repository.SelectXorInsertAsync(block.Hash, block.Size, cancellationToken).ConfigureAwait(false);
            _blockIds.Add(result.Id);
            if (result.Created)
            {
                stats.AddNewBlock(block.Size);
                FlushIfCommitted();
            }
        }

        var blocksetId = await repository.AddBlocksetAsync(_blockIds, file.FullHash, cancellationToken).ConfigureAwait(false);
        _uncommitted.Add(new FileMapEntry(file.Path, blocksetId, file.Length));
        FlushIfCommitted();
        recorder?.Write(_fileIndex, file.Blocks);
        _fileIndex++;
        stats.AddIndexed(file.Length, file.Blocks.Count);
    }

    /// <summary>Ends the open batch, committing or rolling back, and writes the sidecar lines of what was committed.</summary>
    public async ValueTask FinishAsync(DisposeBehavior behavior)
    {
        if (behavior == DisposeBehavior.Commit)
        {
            await repository.CommitAsync(CancellationToken.None).ConfigureAwait(false);
            FlushIfCommitted();
        }
        else
        {
            await repository.RollbackAsync(CancellationToken.None).ConfigureAwait(false);
            _uncommitted.Clear();
        }
    }

    private void FlushIfCommitted()
    {
        if (repository.PendingWrites != 0)
        {
            return;
        }

        foreach (var entry in _uncommitted)
        {
            FileMap.Write(sidecar, entry);
        }

        _uncommitted.Clear();
    }
}
