using BlockDb.PostgreSql.Blocks;
using BlockDb.PostgreSql.Blocksets;
using BlockDb.PostgreSql.Volumes;
using Npgsql;

namespace BlockDb.PostgreSql.Sessions;

/// <summary>
/// A session on the server: one pooled connection for its lifetime (reopened after it breaks), its own commit batch
/// (<see cref="PgBatch"/>), one call at a time (<see cref="CallGate"/>). See <see cref="IBlockRepository"/>.
/// </summary>
/// <remarks>
/// Cancellation: every call checks its token first; a statement that runs outside a batch is cancelled on the server
/// when the token fires, but one inside an open batch is not (a cancelled statement aborts the whole transaction,
/// losing the batch), so it runs to its end, bounded by the server's <c>statement_timeout</c>. A call that fails
/// because the connection was lost (the server restarted, the backend was terminated) runs once more on a new
/// connection when nothing was pending and running it again cannot write twice (reads, select-xor-insert, and writes
/// inside a transaction that never committed).
/// </remarks>
internal sealed partial class PostgreSqlSession : IBlockRepository
{
    private const int BusyRetryMilliseconds = 20;
    private readonly PgContext _context;
    private readonly CallGate _gate = new();
    private int _calls;
    private readonly PgBatch _batch;
    private readonly Timer? _ageTimer;
    private readonly Action<PostgreSqlSession> _onDisposed;
    private NpgsqlConnection? _connection;

    private PostgreSqlSession(PgContext context, NpgsqlConnection connection, Action<PostgreSqlSession> onDisposed)
    {
        _context = context;
        _connection = connection;
        _onDisposed = onDisposed;
        _batch = new PgBatch(context.Options.Batching);
        if (context.Options.Batching.CommitAfterMilliseconds is { } age)
        {
            _ageTimer = new Timer(static state => ((PostgreSqlSession)state!).FireAgeTimer(), this, Timeout.Infinite, Timeout.Infinite);
            _batch.Opened = () => Schedule(age);
        }
    }

    public PragmaSettings AppliedPragmas => PragmaSettings.None;

    public int PendingWrites => _batch.Pending;

    /// <summary>Opens a session on a new pooled connection.</summary>
    public static async ValueTask<PostgreSqlSession> OpenAsync(PgContext context, Action<PostgreSqlSession> onDisposed, CancellationToken cancellationToken)
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

        return new PostgreSqlSession(context, connection, onDisposed);
    }

    public SqliteCacheStats? ReadCacheStats()
    {
        ObjectDisposedException.ThrowIf(_gate.IsClosed, this);
        return null;
    }

    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        var key = PgInput.Block(hash, size);
        return CallAsync(ct => RunAsync(nameof(FindBlockAsync), (c, t, token) => PgBlocks.FindAsync(c, t, key, size, token), write: false, retryable: true, ct), cancellationToken);
    }

    public ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        CallAsync(ct => RunAsync(nameof(ListBlocksetBlocksAsync), (c, t, token) => PgBlocksets.ListAsync(c, t, blocksetId, token), write: false, retryable: true, ct), cancellationToken);

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        CallAsync(ct => RunAsync(nameof(GetBlocksetAsync), (c, t, token) => PgBlocksets.GetBlocksetAsync(c, t, blocksetId, token), write: false, retryable: true, ct), cancellationToken);

    public ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default) =>
        CallAsync(ct => RunAsync(nameof(GetCountsAsync), (c, t, token) => PgBlocks.CountsAsync(c, t, token), write: false, retryable: true, ct), cancellationToken);

    public ValueTask<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        var key = PgInput.Block(hash, size);
        return CallAsync(
            async ct =>
            {
                var id = await WriteAsync(nameof(InsertBlockAsync), (c, t, token) => PgBlocks.InsertAsync(c, t, key, size, token), static id => id is not null, ct).ConfigureAwait(false);
                return id ?? throw PgContext.BlockExists(hash, size);
            },
            cancellationToken);
    }

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default) =>
        SelectXorInsertCoreAsync(PgInput.Block(hash, size), size, null, cancellationToken);

    public ValueTask<long?> FindBlockAsync(BlockHash hash, long size, CancellationToken cancellationToken = default)
    {
        var key = PgInput.Block(hash, size);
        return CallAsync(ct => RunAsync(nameof(FindBlockAsync), (c, t, token) => PgBlocks.FindAsync(c, t, key, size, token), write: false, retryable: true, ct), cancellationToken);
    }

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockHash hash, long size, long? volumeId = null, CancellationToken cancellationToken = default) =>
        SelectXorInsertCoreAsync(PgInput.Block(hash, size), size, volumeId, cancellationToken);

    public ValueTask<int> SelectXorInsertAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        var (hashes, sizes, _) = PgInput.Keys(blocks.Span, results.Length, forBlockset: false);
        var strategy = _context.Options.SelectXorInsert;
        return CallAsync(
            async ct =>
            {
                _context.RequireWritable(nameof(SelectXorInsertAsync));
                if (hashes.Length == 0)
                {
                    return 0;
                }

                // SelectThenInsert: one read first, as the one-block call does; a call whose blocks are all known writes nothing.
                if (strategy == SelectXorInsertStrategy.SelectThenInsert)
                {
                    var found = await RunAsync(nameof(SelectXorInsertAsync), (c, t, token) => PgBlocks.FindManyAsync(c, t, hashes, sizes, token), write: false, retryable: true, ct).ConfigureAwait(false);
                    if (found.AllFound)
                    {
                        return found.Fill(results.Span, volumeId, hashes, sizes);
                    }
                }

                var outcome = await WriteAsync(
                    nameof(SelectXorInsertAsync),
                    (c, t, token) => PgBlocks.InsertManyAsync(c, t, hashes, sizes, volumeId, blockset: false, fullHash: null, token),
                    static o => o.Writes,
                    ct,
                    retryable: true).ConfigureAwait(false);
                return outcome.Fill(results.Span, volumeId, hashes, sizes);
            },
            cancellationToken);
    }

    public ValueTask<long> SelectXorInsertBlocksetAsync(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default)
    {
        var (hashes, sizes, _) = PgInput.Keys(blocks.Span, results.Length, forBlockset: true);
        var full = fullHash.IsEmpty ? null : fullHash.Bytes.ToArray();
        return CallAsync(
            async ct =>
            {
                // One round trip whatever the strategy: the blocks, their IDs and the blockset (PgBlocks.InsertManyAsync).
                var outcome = await WriteAsync(
                    nameof(SelectXorInsertBlocksetAsync),
                    (c, t, token) => PgBlocks.InsertManyAsync(c, t, hashes, sizes, volumeId, blockset: true, full, token),
                    static o => o.Writes,
                    ct).ConfigureAwait(false);
                outcome.Fill(results.Span, volumeId, hashes, sizes);
                var added = outcome.Blockset!.Value;
                return added.Id ?? throw PgInput.Refused(added, i => $"hash {Convert.ToBase64String(hashes[i])}, size {sizes[i]}");
            },
            cancellationToken);
    }

    /// <summary>
    /// Select-xor-insert of one block (its hash bytes checked already), with or without a volume: with SelectThenInsert a
    /// lookup first, then (after a miss, or at once with the insert-first strategies) the insert and the lookup in one round trip.
    /// </summary>
    private ValueTask<SelectXorInsertResult> SelectXorInsertCoreAsync(byte[] key, long size, long? volumeId, CancellationToken cancellationToken)
    {
        var strategy = _context.Options.SelectXorInsert;
        return CallAsync(
            async ct =>
            {
                _context.RequireWritable(nameof(SelectXorInsertAsync));
                if (strategy == SelectXorInsertStrategy.SelectThenInsert
                    && await RunAsync(nameof(SelectXorInsertAsync), (c, t, token) => PgBlocks.FindAsync(c, t, key, size, token), write: false, retryable: true, ct).ConfigureAwait(false) is { } found)
                {
                    return new SelectXorInsertResult(found, false);
                }

                if (volumeId is not { } volume)
                {
                    var returning = strategy != SelectXorInsertStrategy.InsertOrIgnoreThenSelect;
                    return await WriteAsync(
                        nameof(SelectXorInsertAsync),
                        (c, t, token) => PgBlocks.InsertThenSelectAsync(c, t, returning, key, size, token),
                        static r => r.Created,
                        ct,
                        retryable: true).ConfigureAwait(false);
                }

                // The insert-first strategies and SelectThenInsert after a miss run the same statement with a volume.
                var (id, created, state) = await WriteAsync(nameof(SelectXorInsertAsync), (c, t, token) => PgBlocks.InsertInVolumeAsync(c, t, key, size, volume, thenFind: true, token), static r => r.Created, ct, retryable: true).ConfigureAwait(false);
                return id is { } known
                    ? new SelectXorInsertResult(known, created)
                    : throw PgVolumes.Unrecordable(volume, state) ?? new BlockDbException($"The block (hash {Convert.ToBase64String(key)}, size {size}) was neither inserted nor found; was it deleted meanwhile?");
            },
            cancellationToken,
            nameof(SelectXorInsertAsync));
    }

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        var full = PgInput.FullHash(fullHash);
        return CallAsync(
            async ct =>
            {
                var (hashes, sizes) = PgInput.Keys(blocks, ct);
                var added = await WriteAsync(nameof(AddBlocksetAsync), (c, t, token) => PgBlocksets.AddBlocksetAsync(c, t, hashes, sizes, full, token), static r => r.Id is not null, ct).ConfigureAwait(false);
                return added.Id ?? throw PgInput.Refused(added, i => blocks[i].ToString());
            },
            cancellationToken);
    }

    public ValueTask<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        var full = PgInput.FullHash(fullHash);
        return CallAsync(
            async ct =>
            {
                var ids = PgInput.Ids(blockIds, ct);
                var added = await WriteAsync(nameof(AddBlocksetAsync), (c, t, token) => PgBlocksets.AddBlocksetAsync(c, t, ids, full, token), static r => r.Id is not null, ct).ConfigureAwait(false);
                return added.Id ?? throw PgInput.Refused(added, i => $"ID {ids[i]}");
            },
            cancellationToken);
    }

    public ValueTask CommitAsync(CancellationToken cancellationToken = default) => EndBatchAsync(commit: true, cancellationToken);

    public ValueTask RollbackAsync(CancellationToken cancellationToken = default) => EndBatchAsync(commit: false, cancellationToken);

    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    private ValueTask EndBatchAsync(bool commit, CancellationToken cancellationToken) =>
        new(CallAsync(
            async _ =>
            {
                await (commit ? _batch.CommitAsync() : _batch.DiscardAsync()).ConfigureAwait(false);
                return true;
            },
            cancellationToken).AsTask());

    /// <summary>Waits for a call in flight, ends the open batch as <see cref="BatchingOptions.OnDispose"/> says, and gives the connection back to the pool.</summary>
    /// <exception cref="BlockDbBatchRolledBackException">The final commit (or an earlier age commit) failed: those writes are not on the server.</exception>
    public ValueTask DisposeAsync() => _gate.CloseAsync(DisposeCoreAsync);

    private async ValueTask DisposeCoreAsync()
    {
        try
        {
            if (_ageTimer is not null)
            {
                await _ageTimer.DisposeAsync().ConfigureAwait(false);
            }

            if (_context.Options.Batching.OnDispose == DisposeBehavior.Commit && _connection is not null)
            {
                await _batch.CommitAsync().ConfigureAwait(false);
            }
            else
            {
                await _batch.DiscardAsync().ConfigureAwait(false);
            }

            _batch.ThrowDeferred();
        }
        finally
        {
            if (_connection is not null)
            {
                await _connection.DisposeAsync().ConfigureAwait(false);
            }

            _onDisposed(this);
        }
    }
}
