using System.Collections.Concurrent;

namespace BlockDb.Diagnostics;

/// <summary>
/// Runs a database's checks and repairs (both engines) off the caller's thread, each on a connection of its own. Invariant: every
/// started run is in <c>_running</c> until it has finished; <see cref="CloseAsync"/> cancels them all and waits for
/// them, and no run starts after it (a run that started while it ran is cancelled at once).
/// </summary>
internal sealed class MaintenanceRunner
{
    private readonly ConcurrentDictionary<Task, byte> _running = new();
    private readonly CancellationTokenSource _closing = new();
    private int _closed;

    /// <summary>Starts <paramref name="work"/>, linked to the caller's token and to the database's close.</summary>
    /// <exception cref="ObjectDisposedException">The database is closing.</exception>
    public ValueTask<T> Run<T>(object owner, Func<CancellationToken, ValueTask<T>> work, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _closed) != 0, owner);
        var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _closing.Token);
        var token = linked.Token;

        // Registered before it starts, so a close that runs meanwhile either waits for it or finds it cancelled before
        // it ran (a task whose token is cancelled before it starts never runs its work, and so opens no connection).
        var start = new Task<Task<T>>(
            () =>
            {
                token.ThrowIfCancellationRequested();
                return work(token).AsTask();
            },
            token);
        var task = start.Unwrap();
        _running.TryAdd(task, 0);
        _ = task.ContinueWith(
            t =>
            {
                _running.TryRemove(t, out _);
                linked.Dispose();
            },
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
        if (Volatile.Read(ref _closed) != 0)
        {
            linked.Cancel(); // closed while starting: the close may not have seen it
        }

        try
        {
            start.Start(TaskScheduler.Default);
        }
        catch (InvalidOperationException) when (start.IsCanceled)
        {
            // Cancelled before it started (by the caller's token or the close): it never runs.
        }
        return new(task);
    }

    /// <summary>Cancels every run and waits for each to end (their own failures, cancellation included, go to their callers).</summary>
    public async Task CloseAsync()
    {
        Volatile.Write(ref _closed, 1);
        await _closing.CancelAsync().ConfigureAwait(false);
        var running = _running.Keys.ToArray();
        if (running.Length > 0)
        {
            await Task.WhenAll(running).ContinueWith(static _ => { }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).ConfigureAwait(false);
        }
    }
}
