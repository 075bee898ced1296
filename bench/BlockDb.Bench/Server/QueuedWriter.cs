using System.Threading.Channels;

namespace BlockDb.Bench.Server;

/// <summary>
/// Group commit over the public API, for the comparison with the PostgreSQL shared session: callers queue
/// select-xor-inserts, one session runs whatever is queued in one transaction and commits it, then completes them.
/// Only <see cref="SelectXorInsertAsync"/> is offered.
/// </summary>
internal sealed class QueuedWriter : IAsyncDisposable
{
    private readonly IBlockSession _session;
    private readonly Channel<(string Hash, long Size, TaskCompletionSource<SelectXorInsertResult> Done)> _queue =
        Channel.CreateUnbounded<(string, long, TaskCompletionSource<SelectXorInsertResult>)>(new UnboundedChannelOptions { SingleReader = true });

    private readonly Task _loop;

    public QueuedWriter(IBlockSession session)
    {
        _session = session;
        _loop = Task.Run(LoopAsync);
    }

    public async ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, CancellationToken cancellationToken = default)
    {
        var done = new TaskCompletionSource<SelectXorInsertResult>(TaskCreationOptions.RunContinuationsAsynchronously);
        await _queue.Writer.WriteAsync((hash, size, done), cancellationToken);
        return await done.Task;
    }

    public async ValueTask DisposeAsync()
    {
        _queue.Writer.Complete();
        await _loop;
    }

    private async Task LoopAsync()
    {
        var batch = new List<(string Hash, long Size, TaskCompletionSource<SelectXorInsertResult> Done, SelectXorInsertResult Result)>();
        while (await _queue.Reader.WaitToReadAsync())
        {
            batch.Clear();
            while (batch.Count < 4096 && _queue.Reader.TryRead(out var item))
            {
                batch.Add((item.Hash, item.Size, item.Done, await _session.SelectXorInsertAsync(BlockKey.Parse(item.Hash, item.Size))));
            }

            await _session.CommitAsync();
            batch.ForEach(b => b.Done.TrySetResult(b.Result));
        }
    }
}
