using BlockDb.Engine;
using BlockDb.PostgreSql.Blocks;
using BlockDb.PostgreSql.Blocksets;
using BlockDb.PostgreSql.Collection;
using BlockDb.PostgreSql.Volumes;
using Npgsql;

namespace BlockDb.PostgreSql.Engine;

/// <summary>
/// The PostgreSQL engine of one session (<see cref="IEngineSession"/>), under the one session class
/// <see cref="BlockSession{TEngine}"/>: each operation is one round trip (or, under <see cref="SelectXorInsertStrategy.SelectThenInsert"/>,
/// a lookup first) on the session's <see cref="PgConnection"/>, in its <see cref="PgTransaction"/>; the input is
/// checked already. A write counts what it wrote; the policy commits between calls [B1].
/// </summary>
internal readonly struct PgSession : IEngineSession
{
    private readonly PgContext _context;
    private readonly PgConnection _db;
    private readonly PgTransaction _tx;

    private PgSession(PgContext context, PgConnection db, PgTransaction tx)
    {
        _context = context;
        _db = db;
        _tx = tx;
    }

    /// <summary>Opens a session on a new pooled connection.</summary>
    /// <exception cref="BlockDbException">The server could not be reached; the SQLSTATE is kept.</exception>
    public static async ValueTask<ISessionHandle> OpenAsync(PgContext context, Action<ISessionHandle> onDisposed, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        NpgsqlConnection connection;
        try
        {
            connection = await context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, "Opening a session");
        }

        var options = context.Options;
        var transaction = new PgTransaction(options.Batching);
        var policy = new CommitPolicy(options.Batching, transaction);
        var gate = new CallGate();
        var site = new CallSite(gate, policy, "postgresql", context.ProviderName, context.Server, context.Logger);
        var idleTimer = options.Batching.CommitAfterMilliseconds is { } age && !options.ReadOnly
            ? new IdleTimer(gate, policy, transaction, null, age)
            : null;
        var engine = new PgSession(context, new PgConnection(context, connection, transaction), transaction);
        return new BlockSession<PgSession>(engine, site, idleTimer, options.ReadOnly, onDisposed);
    }

    /// <summary>
    /// Opens a session of the shared session's pool (<see cref="BlockDb.Shared.PooledWrites"/>): every write commits on its
    /// own (<see cref="BatchingOptions.CommitEvery"/> = 1, no age commit), and it holds a connection from the pool only
    /// during a call [P3], so idle pooled sessions keep none.
    /// </summary>
    public static ISessionHandle OpenPooled(PgContext context)
    {
        var options = context.Options;
        var transaction = new PgTransaction(PooledBatching);
        var policy = new CommitPolicy(PooledBatching, transaction);
        var site = new CallSite(new CallGate(), policy, "postgresql", context.ProviderName, context.Server, context.Logger);
        var engine = new PgSession(context, new PgConnection(context, null, transaction, perCall: true), transaction);
        return new BlockSession<PgSession>(engine, site, null, options.ReadOnly, static _ => { });
    }

    private static readonly BatchingOptions PooledBatching = new() { CommitEvery = 1, CommitAfterMilliseconds = null, OnDispose = DisposeBehavior.Rollback };

    /// <summary>Whether a write that failed on a lost connection may run once more: only inside a transaction (nothing of it committed before the loss).</summary>
    private bool WriteRetryable => !_tx.Autocommit;

    ValueTask<long?> IEngineSession.FindBlockAsync(in BlockKey block, CancellationToken cancellationToken) =>
        FindAsync(nameof(IBlockReader.FindBlockAsync), block.Hash.Bytes.ToArray(), block.Size, cancellationToken);

    private ValueTask<long?> FindAsync(string operation, byte[] key, long size, CancellationToken cancellationToken) =>
        _db.RunAsync(operation, (c, t, token) => PgBlocks.FindAsync(c, t, key, size, token), write: false, retryable: true, cancellationToken);

    ValueTask<SelectXorInsertResult> IEngineSession.SelectXorInsertAsync(in BlockKey block, long? volumeId, CancellationToken cancellationToken) =>
        SelectXorInsertAsync(block.Hash.Bytes.ToArray(), block.Size, volumeId, cancellationToken);

    /// <summary>
    /// Select-xor-insert of one block, with or without a volume: with SelectThenInsert a lookup first, then (after a miss,
    /// or at once with the insert-first strategies) the insert and the lookup in one round trip.
    /// </summary>
    private async ValueTask<SelectXorInsertResult> SelectXorInsertAsync(byte[] key, long size, long? volumeId, CancellationToken cancellationToken)
    {
        const string operation = nameof(IBlockWriter.SelectXorInsertAsync);
        var strategy = _context.Options.SelectXorInsert;
        if (strategy == SelectXorInsertStrategy.SelectThenInsert
            && await FindAsync(operation, key, size, cancellationToken).ConfigureAwait(false) is { } found)
        {
            return new SelectXorInsertResult(found, false);
        }

        if (volumeId is not { } volume)
        {
            var returning = strategy != SelectXorInsertStrategy.InsertOrIgnoreThenSelect;
            var result = await _db.RunAsync(operation, (c, t, token) => PgBlocks.InsertThenSelectAsync(c, t, returning, key, size, token), write: true, retryable: true, cancellationToken).ConfigureAwait(false);
            _tx.Wrote(result.Created);
            return _db.RepeatedAutocommitWrite ? result with { Created = true } : result; // the lost run may have created it
        }

        // The insert-first strategies and SelectThenInsert after a miss run the same statement with a volume.
        var (id, created, state) = await _db.RunAsync(operation, (c, t, token) => PgBlocks.InsertInVolumeAsync(c, t, key, size, volume, token), write: true, retryable: true, cancellationToken).ConfigureAwait(false);
        _tx.Wrote(created);
        return id is { } known
            ? new SelectXorInsertResult(known, created || _db.RepeatedAutocommitWrite)
            : throw await RefusedAsync(PgVolumes.Unrecordable(volume, state) ?? new BlockDbException($"The block (hash {Convert.ToBase64String(key)}, size {size}) was neither inserted nor found; was it deleted meanwhile?")).ConfigureAwait(false);
    }

    public async ValueTask<int> SelectXorInsertManyAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, CancellationToken cancellationToken)
    {
        const string operation = nameof(IBlockWriter.SelectXorInsertManyAsync);
        if (blocks.IsEmpty)
        {
            return 0;
        }

        var (hashes, sizes) = PgKeys.Of(blocks.Span, forBlockset: false);

        // SelectThenInsert: one read first, as the one-block call does; a call whose blocks are all known writes nothing.
        if (_context.Options.SelectXorInsert == SelectXorInsertStrategy.SelectThenInsert)
        {
            var found = await _db.RunAsync(operation, (c, t, token) => PgBlocks.FindManyAsync(c, t, hashes, sizes, token), write: false, retryable: true, cancellationToken).ConfigureAwait(false);
            if (found.AllFound)
            {
                return found.Fill(results.Span, volumeId, hashes, sizes);
            }
        }

        var outcome = await _db.RunAsync(operation, (c, t, token) => PgBlocks.InsertManyAsync(c, t, hashes, sizes, volumeId, blockset: false, fullHash: null, token), write: true, retryable: true, cancellationToken).ConfigureAwait(false);
        _tx.Wrote(outcome.Writes);
        try
        {
            return outcome.Fill(results.Span, volumeId, hashes, sizes, outcomeUnknown: _db.RepeatedAutocommitWrite);
        }
        catch (BlockDbException e)
        {
            throw await RefusedAsync(e).ConfigureAwait(false);
        }
    }

    public async ValueTask<long> AddBlocksetAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash, long? volumeId, CancellationToken cancellationToken)
    {
        var (hashes, sizes) = PgKeys.Of(blocks.Span, forBlockset: true);
        var full = fullHash.IsEmpty ? null : fullHash.Bytes.ToArray();

        // One round trip whatever the strategy: the blocks, their IDs and the blockset (PgBlocks.InsertManyAsync).
        var outcome = await _db.RunAsync(nameof(IBlockWriter.AddBlocksetAsync), (c, t, token) => PgBlocks.InsertManyAsync(c, t, hashes, sizes, volumeId, blockset: true, full, token), write: true, WriteRetryable, cancellationToken).ConfigureAwait(false);
        _tx.Wrote(outcome.Writes);
        try
        {
            var added = outcome.Blockset!.Value;
            Exception Refusal() => PgKeys.Refused(added, i => $"hash {Convert.ToBase64String(hashes[i])}, size {sizes[i]}");
            if (added is { Id: null, InDeletedVolume: not null } && outcome.VolumeRefusal(volumeId) is null)
            {
                // Refused for a found block in a volume being deleted: the insert skipped the new blocks (the call is
                // whole), so their missing IDs are not the volume's refusal, which Fill would report first.
                throw Refusal();
            }

            outcome.Fill(results.Span, volumeId, hashes, sizes);
            return added.Id ?? throw Refusal();
        }
        catch (BlockDbException e)
        {
            throw await RefusedAsync(e).ConfigureAwait(false);
        }
    }

    /// <summary>Not used: PostgreSQL's bulk import has its own target (<see cref="Import.PgImportTarget"/>).</summary>
    public ValueTask<bool> ImportBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash, long length, CancellationToken cancellationToken) =>
        ValueTask.FromException<bool>(new NotSupportedException("PostgreSQL imports blocksets through its own import target."));

    public ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken) =>
        _db.RunAsync(nameof(IBlockReader.GetBlockAsync), (c, t, token) => PgBlocks.GetBlockAsync(c, t, blockId, token), write: false, retryable: true, cancellationToken);

    public ValueTask<long?> FindBlocksetAsync(BlockHash fullHash, long length, CancellationToken cancellationToken)
    {
        var hash = fullHash.Bytes.ToArray();
        return _db.RunAsync(nameof(IBlockReader.FindBlocksetAsync), (c, t, token) => PgBlocksets.FindBlocksetAsync(c, t, hash, length, token), write: false, retryable: true, cancellationToken);
    }

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken) =>
        _db.RunAsync(nameof(IBlockReader.GetBlocksetAsync), (c, t, token) => PgBlocksets.GetBlocksetAsync(c, t, blocksetId, token), write: false, retryable: true, cancellationToken);

    public ValueTask<int> ListBlocksetBlocksAsync(long blocksetId, int fromIndex, Memory<BlocksetBlock> into, CancellationToken cancellationToken) =>
        _db.RunAsync(nameof(IBlockReader.ListBlocksetBlocksAsync), (c, t, token) => PgBlocksets.ListAsync(c, t, blocksetId, fromIndex, into, token), write: false, retryable: true, cancellationToken);

    public async ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken)
    {
        var deleted = await _db.RunAsync(nameof(IBlockWriter.DeleteBlocksetAsync), (c, t, token) => PgBlocksets.DeleteBlocksetAsync(c, t, blocksetId, token), write: true, WriteRetryable, cancellationToken).ConfigureAwait(false);
        _tx.Wrote(deleted);
        if (!deleted)
        {
            throw await RefusedAsync(new BlocksetNotFoundException(blocksetId)).ConfigureAwait(false);
        }
    }

    public async ValueTask<CollectResult> CollectAsync(long? volumeId, CancellationToken cancellationToken)
    {
        var result = await _db.RunAsync(nameof(IBlockWriter.DeleteUnreferencedBlocksAsync), (c, t, token) => PgCollection.CollectAsync(c, t, volumeId, token), write: true, WriteRetryable, cancellationToken).ConfigureAwait(false);
        _tx.Wrote(result.Blocks > 0);
        return result;
    }

    public async ValueTask<long> RegisterVolumeAsync(string name, VolumeState state, CancellationToken cancellationToken)
    {
        var id = await _db.RunAsync(nameof(IBlockWriter.RegisterVolumeAsync), (c, t, token) => PgVolumes.RegisterVolumeAsync(c, t, name, state, token), write: true, WriteRetryable, cancellationToken).ConfigureAwait(false);
        _tx.Wrote(id is not null);
        return id ?? throw await RefusedAsync(new BlockDbConflictException($"A volume named {Quoted.Value(name)} exists already; volume names are unique.")).ConfigureAwait(false);
    }

    public async ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size, CancellationToken cancellationToken)
    {
        await _db.RunAsync(nameof(IBlockWriter.SetVolumeStateAsync), (c, t, token) => PgVolumes.SetVolumeStateAsync(c, t, volumeId, state, size, token), write: true, WriteRetryable, cancellationToken).ConfigureAwait(false);
        _tx.Wrote(true);
    }

    public async ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken)
    {
        var ids = PgKeys.Ids(blockIds, cancellationToken);
        var (moved, missing) = await _db.RunAsync(nameof(IBlockWriter.MoveBlocksAsync), (c, t, token) => PgVolumes.MoveBlocksAsync(c, t, ids, toVolumeId, token), write: true, WriteRetryable, cancellationToken).ConfigureAwait(false);
        _tx.Wrote(moved > 0);
        return missing is { } position
            ? throw await RefusedAsync(new BlockNotFoundException($"Block {position} of the list (ID {ids[position]}) is not in the index; nothing was moved.", position)).ConfigureAwait(false)
            : moved;
    }

    public async ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken) =>
        await _db.RunAsync(nameof(IBlockReader.GetVolumeAsync), (c, t, token) => PgVolumes.GetVolumeAsync(c, t, volumeId, null, token), write: false, retryable: true, cancellationToken).ConfigureAwait(false)
            ?? throw new VolumeNotFoundException(volumeId);

    public ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken) =>
        _db.RunAsync(nameof(IBlockReader.FindVolumeAsync), (c, t, token) => PgVolumes.GetVolumeAsync(c, t, null, name, token), write: false, retryable: true, cancellationToken);

    public ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken) =>
        _db.RunAsync(nameof(IBlockReader.GetCountsAsync), (c, t, token) => PgBlocks.CountsAsync(c, t, token), write: false, retryable: true, cancellationToken);

    public ValueTask CommitAsync() => _tx.CommitAsync();

    public ValueTask RollbackAsync() => _tx.RollbackAsync();

    public SqliteCacheStats? ReadCacheStats() => null;

    public ValueTask CloseAsync() => _db.CloseAsync();

    /// <summary>A write refused after its round trip: a transaction this call opened and left without a write is ended first [B1]; returns <paramref name="refusal"/> to throw.</summary>
    private async ValueTask<Exception> RefusedAsync(Exception refusal)
    {
        await _tx.EndIfEmptyAsync().ConfigureAwait(false);
        return refusal;
    }
}
