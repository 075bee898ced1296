using System.Diagnostics;
using System.Threading.Channels;
using BlockDb.Diagnostics;
using BlockDb.Engine;

namespace BlockDb.Shared;

/// <summary>
/// SQLite's write route (<see cref="IWriteRoute"/>): one writer session fed by a bounded queue of
/// <see cref="WriteRequest"/>s, committing whatever is queued as one transaction (group commit [S2]), and completing each
/// caller only after that commit [S1].
/// </summary>
/// <remarks>
/// Invariants: the writer session is used only by the writer loop (<see cref="RunAsync"/>) and disposed only by
/// <see cref="DisposeAsync"/> after the loop ended; a request taken from the queue is completed or failed exactly
/// once, and never completed before the transaction holding it has committed [S1]; a request's writes are whole (every
/// session's write call is: a request that fails or sees its token cancelled leaves nothing in the transaction, and one
/// that ran completes with the commit whatever its token says)
/// [S2]; a transaction is always ended before the loop waits for the queue, so an idle writer never holds the write
/// lock [S2]; dispose lets every queued request commit [S3].
/// </remarks>
internal sealed class GroupCommitWriter : IWriteRoute
{
    private readonly ISessionHandle _writer;
    private readonly GroupCommitOptions _options;
    private readonly Channel<WriteRequest> _queue;
    private readonly Task _loop;
    private readonly TagList _tags;
    private long _batches;
    private long _acknowledged;

    public GroupCommitWriter(ISessionHandle writer, GroupCommitOptions options, TagList tags)
    {
        _writer = writer;
        _tags = tags;
        _options = options;
        _queue = Channel.CreateBounded<WriteRequest>(new BoundedChannelOptions(options.QueueCapacity)
        {
            SingleReader = true,
            FullMode = BoundedChannelFullMode.Wait,
        });
        _loop = Task.Run(RunAsync);
    }

    public long CommittedBatches => Interlocked.Read(ref _batches);

    public long AcknowledgedWrites => Interlocked.Read(ref _acknowledged);

    public int QueueLength => _queue.Reader.Count;

    /// <summary>
    /// Queues a write. When the queue takes it at once (it is not full), the caller gets the request's own task, which
    /// completes the moment its batch has committed (not on a later continuation), so nothing acknowledged is still
    /// pending when a dispose returns [S3].
    /// </summary>
    public ValueTask<TResult> WriteAsync<TResult>(WriteRequest<TResult> request) => Enqueue(_queue.Writer, request);

    /// <summary>
    /// Queues <paramref name="request"/> and returns its task: the request's own when the queue takes it at once, else
    /// one that waits for room (honouring the request's token) and fails with <see cref="Errors.SharedDisposed"/> once the
    /// queue is closed. Shared by the routes that queue (this one, PostgreSQL's gathered writes).
    /// </summary>
    public static ValueTask<TResult> Enqueue<TResult>(ChannelWriter<WriteRequest> queue, WriteRequest<TResult> request)
    {
        var task = request.Task;
        return new(queue.TryWrite(request) ? task : EnqueueWhenRoomAsync(queue, request));
    }

    /// <summary>Stops taking writes, lets the queued ones commit, ends the loop and disposes the writer session [S3].</summary>
    public async ValueTask DisposeAsync()
    {
        _queue.Writer.TryComplete();
        try
        {
            await _loop.ConfigureAwait(false);
        }
        finally
        {
            await _writer.DisposeAsync().ConfigureAwait(false);
        }
    }

    private static async Task<TResult> EnqueueWhenRoomAsync<TResult>(ChannelWriter<WriteRequest> queue, WriteRequest<TResult> request)
    {
        try
        {
            await queue.WriteAsync(request, request.CancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            throw Errors.SharedDisposed();
        }

        return await request.Task.ConfigureAwait(false);
    }

    /// <summary>Takes the first queued write, opens a transaction, keeps taking writes while the queue has some (up to the batch size and age), commits, and only then completes the callers' tasks [S1][S2].</summary>
    private async Task RunAsync()
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
                await ExecuteAsync(request, batch).ConfigureAwait(false);
            }

            try
            {
                // Always end the transaction, even when every write of this round failed: an open one would keep
                // the write lock from other processes while the queue is idle [S2].
                await _writer.CommitAsync().ConfigureAwait(false);
                if (batch.Count > 0)
                {
                    Interlocked.Increment(ref _batches);
                    if (Instruments.GroupCommitBatchSize.Enabled)
                    {
                        Instruments.GroupCommitBatchSize.Record(batch.Count, _tags);
                    }
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

    /// <summary>
    /// Runs one request on the writer session. It completes synchronously (the writer session has no read timer and no
    /// commit-age timer, so nothing but this loop enters its gate); it is awaited, never blocked on, so a thread-pool
    /// thread is never held should that change.
    /// </summary>
    private async ValueTask ExecuteAsync(WriteRequest request, List<WriteRequest> batch)
    {
        if (request.CancellationToken.IsCancellationRequested)
        {
            request.Fail(new OperationCanceledException(request.CancellationToken));
            return;
        }

        try
        {
            await request.RunAsync(_writer).ConfigureAwait(false);
            batch.Add(request);
        }
        catch (BlockDbBatchRolledBackException e)
        {
            // The database rolled the whole transaction back: the batch's earlier writes are gone, not acknowledged.
            request.Fail(e);
            FailAll(batch, e);
        }
        catch (Exception e)
        {
            request.Fail(e);
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
}
