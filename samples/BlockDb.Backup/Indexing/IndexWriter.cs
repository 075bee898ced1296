using BlockDb.Backup.Hashing;
using BlockDb.Backup.Sidecar;
using Microsoft.Extensions.Logging;

namespace BlockDb.Backup.Indexing;

/// <summary>
/// Records hashed files through the one repository session. A file whose content is already a blockset
/// (<c>FindBlocksetAsync</c> by full hash and length: an unchanged file, a copy, every empty file after the first)
/// reuses it; any other file gets <c>SelectXorInsertAsync(hash, size, volume)</c> for each block, new blocks going into
/// the current volume (<see cref="VolumeWriter"/>), then <c>AddBlocksetAsync(blocks, results, fullHash)</c> by the same keys; an empty file is
/// a blockset of length 0 without blocks. A file's sidecar line is written only once its blockset is committed (the
/// session's <c>PendingWrites</c> is back to 0 after a call), so the sidecar never names a blockset that a rollback or
/// a crash took away. On a Duplicati database (<paramref name="duplicati"/> given) a new file's blocklist blocks are
/// recorded into the volume after its blocks and before its blockset, as Duplicati's block splitter does; BlockDb then
/// writes the blockset's <c>BlocklistHash</c> rows itself. Single-threaded, as a session is.
/// </summary>
internal sealed class IndexWriter(IBlockSession repository, VolumeWriter volumes, IndexStats stats, TextWriter sidecar, BlockRecorder? recorder, ILogger logger, DuplicatiTarget? duplicati = null)
{
    private BlockKey[] _keys = new BlockKey[1024];
    private SelectXorInsertResult[] _results = new SelectXorInsertResult[1024];
    private readonly byte[] _blocklist = duplicati is null ? [] : new byte[duplicati.Blocksize];
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

        var fullHash = file.FullHash!;
        if (await repository.FindBlocksetAsync(BlockHash.Parse(fullHash), file.Length, cancellationToken).ConfigureAwait(false) is { } existing)
        {
            Recorded(file, existing, reused: true);
            return;
        }

        var count = file.Blocks.Count;
        if (_keys.Length < count)
        {
            _keys = new BlockKey[count];
            _results = new SelectXorInsertResult[count];
        }

        long? lastVolume = null;
        foreach (var block in file.Blocks)
        {
            var volumeId = lastVolume = await volumes.CurrentAsync(cancellationToken).ConfigureAwait(false);
            var result = await repository.SelectXorInsertAsync(block, volumeId, cancellationToken).ConfigureAwait(false);
            if (result.Created)
            {
                stats.AddNewBlock(block.Size);
                await volumes.AddedAsync(block.Size, cancellationToken).ConfigureAwait(false);
                FlushIfCommitted();
            }
        }

        if (duplicati is not null)
        {
            foreach (var list in duplicati.Blocklists(file.Blocks, _blocklist))
            {
                var volumeId = await volumes.CurrentAsync(cancellationToken).ConfigureAwait(false);
                var result = await repository.SelectXorInsertAsync(list, volumeId, cancellationToken).ConfigureAwait(false);
                if (result.Created)
                {
                    stats.AddNewBlocklistBlock();
                    await volumes.AddedAsync(list.Size, cancellationToken).ConfigureAwait(false);
                    FlushIfCommitted();
                }
            }
        }

        for (var i = 0; i < count; i++)
        {
            _keys[i] = file.Blocks[i];
        }

        // The blocks were inserted above; the blockset's own select-xor-insert creates one again only if it was
        // collected meanwhile, and a block it marks created must be uploaded like any other new block. It names the volume
        // of the file's last block: asking for the current one would register a new, empty volume whenever that block
        // filled the last one.
        var blocksetId = await repository.AddBlocksetAsync(_keys.AsMemory(0, count), _results, BlockHash.Parse(fullHash), lastVolume, cancellationToken).ConfigureAwait(false);
        for (var i = 0; i < count; i++)
        {
            if (_results[i].Created)
            {
                // Recorded into the file's last volume; when that one was closed (Uploaded) meanwhile, the block's bytes go
                // into the current one, so its row must name that volume too.
                var current = await volumes.CurrentAsync(cancellationToken).ConfigureAwait(false);
                if (current != lastVolume)
                {
                    await repository.MoveBlocksAsync([_results[i].Id], current, cancellationToken).ConfigureAwait(false);
                }

                stats.AddNewBlock(_keys[i].Size);
                await volumes.AddedAsync(_keys[i].Size, cancellationToken).ConfigureAwait(false);
            }
        }

        Recorded(file, blocksetId, reused: false);
    }

    /// <summary>
    /// Ends the open batch, committing or rolling back, and writes the sidecar lines of what was committed. After a
    /// complete run the current volume is closed first (set Uploaded); after a cancelled one it stays Temporary.
    /// </summary>
    public async ValueTask FinishAsync(DisposeBehavior behavior, bool completed)
    {
        if (completed)
        {
            await volumes.CloseAsync(CancellationToken.None).ConfigureAwait(false);
        }

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

    private void Recorded(HashedFile file, long blocksetId, bool reused)
    {
        _uncommitted.Add(new FileMapEntry(file.Path, blocksetId, file.Length));
        FlushIfCommitted();
        if (file.Blocks.Count > 0)
        {
            // The record keeps the block stream of every non-empty file, reused or not, as before blocksets were reused.
            recorder?.Write(_fileIndex, file.Blocks);
            _fileIndex++;
        }

        stats.AddIndexed(file.Length, file.Blocks.Count, reused);
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
