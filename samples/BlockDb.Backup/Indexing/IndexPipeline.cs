using System.Runtime.ExceptionServices;
using System.Threading.Channels;
using BlockDb.Backup.Hashing;
using BlockDb.Backup.Walking;

namespace BlockDb.Backup.Indexing;

/// <summary>
/// walker → N hashers → one writer. The walker puts each file on two bounded channels: the work channel, from which
/// the hashers take files in any order, and the ordered channel, from which the writer takes them in walk order and
/// waits for each one's hash. So hashing runs in parallel while the blocksets are written in a deterministic order,
/// and at most <see cref="Window"/> files are in flight. The first failure cancels the other stages.
/// </summary>
internal sealed class IndexPipeline(FileWalker walker, int blockSize, int hashers, IndexWriter writer)
{
    private const int Window = 256;

    public async Task RunAsync(string root, CancellationToken cancellationToken)
    {
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var token = stop.Token;
        var ordered = Channel.CreateBounded<FileWork>(new BoundedChannelOptions(Window) { SingleReader = true, SingleWriter = true });
        var work = Channel.CreateBounded<FileWork>(new BoundedChannelOptions(Window) { SingleWriter = true });
        var stages = new List<Task> { StopOnFailure(Task.Run(() => WalkAsync(root, ordered.Writer, work.Writer, token), token), stop) };
        for (var i = 0; i < hashers; i++)
        {
            stages.Add(StopOnFailure(Task.Run(() => HashAsync(work.Reader, token), token), stop));
        }

        stages.Add(StopOnFailure(WriteAsync(ordered.Reader, token), stop));
        try
        {
            await Task.WhenAll(stages).ConfigureAwait(false);
        }
        catch
        {
            // Report the failure that stopped the pipeline, not the cancellations it caused.
            var cause = stages.Where(t => t.IsFaulted).SelectMany(t => t.Exception!.InnerExceptions).FirstOrDefault(e => e is not OperationCanceledException);
            if (cause is not null)
            {
                ExceptionDispatchInfo.Throw(cause);
            }

            cancellationToken.ThrowIfCancellationRequested();
            throw;
        }
    }

    private static async Task StopOnFailure(Task stage, CancellationTokenSource stop)
    {
        try
        {
            await stage.ConfigureAwait(false);
        }
        catch
        {
            await stop.CancelAsync().ConfigureAwait(false);
            throw;
        }
    }

    private async Task WalkAsync(string root, ChannelWriter<FileWork> ordered, ChannelWriter<FileWork> work, CancellationToken cancellationToken)
    {
        try
        {
            foreach (var file in walker.Walk(root, cancellationToken))
            {
                var item = new FileWork(file);
                await ordered.WriteAsync(item, cancellationToken).ConfigureAwait(false);
                await work.WriteAsync(item, cancellationToken).ConfigureAwait(false);
            }
        }
        finally
        {
            ordered.TryComplete();
            work.TryComplete();
        }
    }

    private async Task HashAsync(ChannelReader<FileWork> work, CancellationToken cancellationToken)
    {
        using var hasher = new BlockHasher(blockSize);
        await foreach (var item in work.ReadAllAsync(cancellationToken).ConfigureAwait(false))
        {
            try
            {
                item.Result.SetResult(hasher.Hash(item.File, cancellationToken));
            }
            catch (OperationCanceledException)
            {
                item.Result.SetCanceled(cancellationToken);
                throw;
            }
            catch (Exception e)
            {
                item.Result.SetException(e);
                throw;
            }
        }
    }

    private async Task WriteAsync(ChannelReader<FileWork> ordered, CancellationToken cancellationToken)
    {
        await foreach (var item in ordered.ReadAllAsync(cancellationToken).ConfigureAwait(false))
        {
            var file = await item.Result.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
            await writer.WriteAsync(file, cancellationToken).ConfigureAwait(false);
        }
    }

    private sealed class FileWork(WalkedFile file)
    {
        public WalkedFile File { get; } = file;

        public TaskCompletionSource<HashedFile> Result { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
