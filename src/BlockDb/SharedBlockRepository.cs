using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading.Channels;

namespace BlockDb;

/// <summary>
/// The thread-safe repository: one writer session fed by a bounded queue, committing groups of writes
/// (group commit), and a pool of reader sessions. See <see cref="ISharedBlockRepository"/>.
/// </summary>
internal sealed class SharedBlockRepository : ISharedBlockRepository
{
    private static readonly BatchingOptions WriterBatching = new() { CommitEvery = 0, CommitAfterMilliseconds = null, OnDispose = DisposeBehavior.Rollback };

    private readonly BlockDatabase _database;
    private readonly GroupCommitOptions _options;
    private readonly Action<SharedBlockRepository> _onDisposed;
    private readonly Channel<WriteRequest> _queue;
    private readonly BlockRepository _writer;
    private readonly ConcurrentBag<IBlockRepository> _idleReaders = [];
    private readonly ConcurrentQueue<IBlockRepository> _allReaders = new();
    private readonly SemaphoreSlim _readerSlots;
    private readonly Task _writerLoop;
    private long _batches;
    private long _acknowledged;
    private int _disposed;

    public SharedBlockRepository(BlockDatabase database, GroupCommitOptions options, Action<SharedBlockRepository> onDisposed)
    {
        _database = database;
        _options = options;
        _onDisposed = onDisposed;
        _writer = database.OpenSession(WriterBatching);
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

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _queue.Writer.TryComplete();
        try
        {
            await _writerLoop.ConfigureAwait(false);
        }
        finally
        {
            _writer.Dispose();
            while (_allReaders.TryDequeue(out var reader))
            {
                reader.Dispose();
            }

            _readerSlots.Dispose();
            _onDisposed(this);
        }
    }

    private async ValueTask<TResult> ReadAsync<TState, TResult>(
        Func<IBlockRepository, TState, CancellationToken, ValueTask<TResult>> read, TState state, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        await _readerSlots.WaitAsync(cancellationToken).ConfigureAwait(false);
        IBlockRepository? reader = null;
        try
        {
            ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
            if (!_idleReaders.TryTake(out reader))
            {
                reader = _database.OpenSession();
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

    private async Task<TResult> EnqueueAsync<TState, TResult>(
        Func<BlockRepository, TState, CancellationToken, ValueTask<TResult>> write, TState state, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        var request = new WriteRequest<TState, TResult>(write, state, cancellationToken);
        try
        {
            await _queue.Writer.WriteAsync(request, cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            throw new ObjectDisposedException(nameof(SharedBlockRepository), "The shared BlockDb repository was disposed; this write was not queued.");
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

                var pendingBefore = _writer.PendingWrites;
                try
                {
                    request.Execute(_writer);
                    batch.Add(request);
                }
                catch (Exception e)
                {
                    request.Fail(e);
                    if (_writer.PendingWrites < pendingBefore)
                    {
                        // SQLite rolled the whole transaction back: the batch's earlier writes are gone, not acknowledged.
                        FailAll(batch, e);
                    }
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
