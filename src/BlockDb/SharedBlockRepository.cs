using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading.Channels;

namespace BlockDb;

/// <summary>
/// The thread-safe repository: one writer session fed by a bounded queue, committing groups of writes
/// (group commit), and a pool of reader sessions. See <see cref="ISharedBlockRepository"/>.
/// </summary>
/// <remarks>
/// Invariants: the writer session is used only by the writer loop; a reader session is used by one read at a time
/// (taken from <c>_idleReaders</c>, returned after); <c>_inFlightReads</c> counts reads between their entry check
/// and their exit, and disposal waits for it to reach zero before any reader is disposed; disposal wakes reads that
/// wait for a reader slot (they fail with <see cref="ObjectDisposedException"/>) and lets queued writes commit.
/// No call is left pending after <see cref="DisposeAsync"/> returns.
/// </remarks>
internal sealed class SharedBlockRepository : ISharedBlockRepository
{
    private static readonly BatchingOptions WriterBatching = new() { CommitEvery = 0, CommitAfterMilliseconds = null, OnDispose = DisposeBehavior.Rollback };

    /// <summary>Readers never write: no batching of their own, no age timer.</summary>
    private static readonly BatchingOptions ReaderBatching = new() { CommitEvery = 1, CommitAfterMilliseconds = null, OnDispose = DisposeBehavior.Rollback };

    private readonly BlockDatabase _database;
    private readonly GroupCommitOptions _options;
    private readonly Action<SharedBlockRepository> _onDisposed;
    private readonly Channel<WriteRequest> _queue;
    private readonly BlockRepository _writer;
    private readonly ConcurrentBag<IBlockRepository> _idleReaders = [];
    private readonly ConcurrentQueue<IBlockRepository> _allReaders = new();
    private readonly SemaphoreSlim _readerSlots;
    private readonly CancellationTokenSource _closing = new();
    private readonly TaskCompletionSource _readsDrained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly bool _readOnly;
    private readonly Task _writerLoop;
    private int _inFlightReads;
    private Task? _disposing;
    private long _batches;
    private long _acknowledged;
    private int _disposed;

    public SharedBlockRepository(BlockDatabase database, GroupCommitOptions options, Action<SharedBlockRepository> onDisposed)
    {
        _database = database;
        _options = options;
        _onDisposed = onDisposed;
        _readOnly = database.Options.ReadOnly;
        _writer = database.OpenSession(WriterBatching, register: false);
        _queue = Channel.CreateBounded<WriteRequest>(new BoundedChannelOptions(options.QueueCapacity)
        {
            SingleReader = true,
            FullMode = BoundedChannelFullMode.Wait,
        });
        _readerSlots = new SemaphoreSlim(options.MaxReaders > 0 ? options.MaxReaders : 2 * Environment.ProcessorCount);
        _writerLoop = Task.Run(RunWriterAsync);
    }

    public long CommittedBatches => Interlocked.Read(ref _batches);

    public long AcknowledgedWrites => Interlocked.Read(ref _acknowledged);

    public ValueTask<long?> FindBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
        return ReadAsync(static (r, s, ct) => r.FindBlockAsync(s.hash, s.size, ct), (hash, size), cancellationToken);
    }

    public Task<long> InsertBlockAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
        return EnqueueAsync(static (w, s, ct) => w.InsertBlockAsync(s.hash, s.size, ct), (hash, size), cancellationToken);
    }

    public async Task<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        ThrowIfReadOnly();
        if (await FindBlockAsync(hash, size, cancellationToken).ConfigureAwait(false) is { } id)
        {
            return new SelectXorInsertResult(id, false);
        }

        return await EnqueueAsync(static (w, s, ct) => w.SelectXorInsertAsync(s.hash, s.size, ct), (hash, size), cancellationToken).ConfigureAwait(false);
    }

    public Task<long> AddBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blocks);
        return EnqueueAsync(static (w, s, ct) => w.AddBlocksetAsync(s.blocks, s.fullHash, ct), (blocks, fullHash), cancellationToken);
    }

    public Task<long> AddBlocksetAsync(IReadOnlyList<long> blockIds, string? fullHash = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blockIds);
        return EnqueueAsync(static (w, s, ct) => w.AddBlocksetAsync(s.blockIds, s.fullHash, ct), (blockIds, fullHash), cancellationToken);
    }

    public ValueTask<IReadOnlyList<BlocksetBlock>> ListBlocksetBlocksAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        ReadAsync(static (r, id, ct) => r.ListBlocksetBlocksAsync(id, ct), blocksetId, cancellationToken);

    public ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        ReadAsync(static (r, id, ct) => r.GetBlocksetAsync(id, ct), blocksetId, cancellationToken);

    public ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default) =>
        ReadAsync(static (r, _, ct) => r.GetCountsAsync(ct), 0, cancellationToken);

    /// <summary>Stops taking writes, waits for the queued ones to commit, then closes every connection.</summary>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>Stops taking calls, waits for queued writes to commit and reads in flight to end, then closes every connection. A second, concurrent dispose waits for the same work.</summary>
    public ValueTask DisposeAsync()
    {
        lock (_queue)
        {
            if (_disposing is null)
            {
                Volatile.Write(ref _disposed, 1);
                _disposing = DisposeCoreAsync();
            }

            return new(_disposing);
        }
    }

    private async Task DisposeCoreAsync()
    {
        await _closing.CancelAsync().ConfigureAwait(false);
        _queue.Writer.TryComplete();
        try
        {
            await _writerLoop.ConfigureAwait(false);
        }
        finally
        {
            if (Volatile.Read(ref _inFlightReads) != 0)
            {
                await _readsDrained.Task.ConfigureAwait(false);
            }

            _writer.Dispose();
            while (_allReaders.TryDequeue(out var reader))
            {
                reader.Dispose();
            }

            _closing.Dispose();
            _onDisposed(this);
        }
    }

    private async ValueTask<TResult> ReadAsync<TState, TResult>(
        Func<IBlockRepository, TState, CancellationToken, ValueTask<TResult>> read, TState state, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        Interlocked.Increment(ref _inFlightReads);
        try
        {
            ThrowIfDisposed();
            await WaitForReaderSlotAsync(cancellationToken).ConfigureAwait(false);
            IBlockRepository? reader = null;
            try
            {
                ThrowIfDisposed();
                if (!_idleReaders.TryTake(out reader))
                {
                    reader = _database.OpenSession(ReaderBatching, register: false);
                    _allReaders.Enqueue(reader);
                }

                return await read(reader, state, cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                if (reader is not null)
                {
                    _idleReaders.Add(reader);
                }

                _readerSlots.Release();
            }
        }
        finally
        {
            if (Interlocked.Decrement(ref _inFlightReads) == 0 && Volatile.Read(ref _disposed) != 0)
            {
                _readsDrained.TrySetResult();
            }
        }
    }

    /// <summary>Waits for a reader slot; disposal ends the wait with <see cref="ObjectDisposedException"/>.</summary>
    private async ValueTask WaitForReaderSlotAsync(CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled)
        {
            try
            {
                await _readerSlots.WaitAsync(_closing.Token).ConfigureAwait(false);
                return;
            }
            catch (OperationCanceledException)
            {
                throw Disposed();
            }
        }

        using var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _closing.Token);
        try
        {
            await _readerSlots.WaitAsync(linked.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw Disposed();
        }
    }

    private void ThrowIfReadOnly()
    {
        if (_readOnly)
        {
            throw new BlockDbReadOnlyException("a write of the shared repository", _database.DataSource);
        }
    }

    private void ThrowIfDisposed()
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            throw Disposed();
        }
    }

    private static ObjectDisposedException Disposed() =>
        new(nameof(SharedBlockRepository), "The shared BlockDb repository was disposed; this call did not run.");

    /// <summary>
    /// Queues a write. When the queue takes it at once (it is not full), the caller gets the request's own task, which
    /// completes the moment its batch has committed (not on a later continuation), so nothing acknowledged is still
    /// pending when a dispose returns.
    /// </summary>
    private Task<TResult> EnqueueAsync<TState, TResult>(
        Func<BlockRepository, TState, CancellationToken, ValueTask<TResult>> write, TState state, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled<TResult>(cancellationToken);
        }

        try
        {
            ThrowIfDisposed();
            ThrowIfReadOnly();
        }
        catch (Exception e)
        {
            return Task.FromException<TResult>(e);
        }

        var request = new WriteRequest<TState, TResult>(write, state, cancellationToken);
        return _queue.Writer.TryWrite(request) ? request.Task : EnqueueWhenRoomAsync(request, cancellationToken);
    }

    private async Task<TResult> EnqueueWhenRoomAsync<TState, TResult>(WriteRequest<TState, TResult> request, CancellationToken cancellationToken)
    {
        try
        {
            await _queue.Writer.WriteAsync(request, cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            throw Disposed();
        }

        return await request.Task.ConfigureAwait(false);
    }

    /// <summary>
    /// The writer: takes the first queued write, opens a transaction, keeps taking writes while the queue has
    /// some (up to the batch size and age), commits, and only then completes the callers' tasks.
    /// </summary>
    private async Task RunWriterAsync()
    {
        var batch = new List<WriteRequest>();
        var reader = _queue.Reader;
        while (await reader.WaitToReadAsync().ConfigureAwait(false))
        {
            var started = Stopwatch.GetTimestamp();
            while (batch.Count < _options.MaxBatchSize
                && Stopwatch.GetElapsedTime(started).TotalMilliseconds < _options.MaxDelayMilliseconds
                && reader.TryRead(out var request))
            {
                if (request.CancellationToken.IsCancellationRequested)
                {
                    request.Fail(new OperationCanceledException(request.CancellationToken));
                    continue;
                }

                try
                {
                    request.Execute(_writer);
                    batch.Add(request);
                }
                catch (BlockDbBatchRolledBackException e)
                {
                    // SQLite rolled the whole transaction back: the batch's earlier writes are gone, not acknowledged.
                    request.Fail(e);
                    FailAll(batch, e);
                }
                catch (Exception e)
                {
                    request.Fail(e);
                }
            }

            try
            {
                // Always end the transaction, even when every write of this round failed: an open one would keep
                // the write lock from other processes while the queue is idle.
                await _writer.CommitAsync().ConfigureAwait(false);
                if (batch.Count > 0)
                {
                    Interlocked.Increment(ref _batches);
                }

                Interlocked.Add(ref _acknowledged, batch.Count);
                foreach (var done in batch)
                {
                    done.Complete();
                }

                batch.Clear();
            }
            catch (Exception e)
            {
                FailAll(batch, e);
            }
        }
    }

    private static void FailAll(List<WriteRequest> batch, Exception e)
    {
        foreach (var request in batch)
        {
            request.Fail(e);
        }

        batch.Clear();
    }

    private abstract class WriteRequest(CancellationToken cancellationToken)
    {
        public CancellationToken CancellationToken { get; } = cancellationToken;

        public abstract void Execute(BlockRepository writer);

        public abstract void Complete();

        public abstract void Fail(Exception e);
    }

    private sealed class WriteRequest<TState, TResult>(
        Func<BlockRepository, TState, CancellationToken, ValueTask<TResult>> write, TState state, CancellationToken cancellationToken)
        : WriteRequest(cancellationToken)
    {
        private readonly TaskCompletionSource<TResult> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private TResult? _result;

        public Task<TResult> Task => _completion.Task;

        // The writer session completes synchronously; GetResult rethrows its failure.
        public override void Execute(BlockRepository writer) => _result = write(writer, state, CancellationToken).GetAwaiter().GetResult();

        public override void Complete() => _completion.TrySetResult(_result!);

        public override void Fail(Exception e)
        {
            if (e is OperationCanceledException && CancellationToken.IsCancellationRequested)
            {
                _completion.TrySetCanceled(CancellationToken);
            }
            else
            {
                _completion.TrySetException(e);
            }
        }
    }
}
