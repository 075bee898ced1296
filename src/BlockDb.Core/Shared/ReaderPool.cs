using System.Collections.Concurrent;
using BlockDb.Engine;

namespace BlockDb.Shared;

/// <summary>
/// The shared repository's reader sessions: at most <c>maxReaders</c> reads at once, each on a session of its own,
/// opened on demand and kept for reuse.
/// </summary>
/// <remarks>
/// Invariants: a reader session is used by one read at a time (taken from <c>_idle</c>, given back after); every
/// session opened is in <c>_all</c>, and only <see cref="DisposeAsync"/> disposes them, after <c>_inFlight</c> (reads
/// between their entry check and their exit) has reached zero; closing wakes the reads waiting for a slot, which fail
/// with <see cref="ObjectDisposedException"/>. No read is left pending once <see cref="DisposeAsync"/> returns.
/// </remarks>
internal sealed class ReaderPool(Func<ISessionHandle> open, int maxReaders)
{
    private readonly ConcurrentBag<ISessionHandle> _idle = [];
    private readonly ConcurrentQueue<ISessionHandle> _all = new();
    private readonly SemaphoreSlim _slots = new(maxReaders);
    private readonly CancellationTokenSource _closing = new();
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _inFlight;
    private int _closed;

    /// <summary>Runs one read on a reader session.</summary>
    /// <exception cref="ObjectDisposedException">The pool is closed.</exception>
    public async ValueTask<TResult> ReadAsync<TState, TResult>(
        Func<IBlockReader, TState, CancellationToken, ValueTask<TResult>> read, TState state, CancellationToken cancellationToken)
    {
        ThrowIfClosed();
        Interlocked.Increment(ref _inFlight);
        try
        {
            ThrowIfClosed();
            await WaitForSlotAsync(cancellationToken).ConfigureAwait(false);
            ISessionHandle? reader = null;
            try
            {
                ThrowIfClosed();
                if (!_idle.TryTake(out reader))
                {
                    reader = open();
                    _all.Enqueue(reader);
                }

                return await read(reader, state, cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                if (reader is not null)
                {
                    _idle.Add(reader);
                }

                _slots.Release();
            }
        }
        finally
        {
            if (Interlocked.Decrement(ref _inFlight) == 0 && Volatile.Read(ref _closed) != 0)
            {
                _drained.TrySetResult();
            }
        }
    }

    /// <summary>Stops taking reads, wakes waiting ones, waits for those in flight, then disposes every reader session.</summary>
    public async ValueTask DisposeAsync()
    {
        // A full fence, so the read of _inFlight below cannot move before this write (a read that entered meanwhile
        // sees the pool closed, or is counted).
        Interlocked.Exchange(ref _closed, 1);
        await _closing.CancelAsync().ConfigureAwait(false);
        if (Volatile.Read(ref _inFlight) != 0)
        {
            await _drained.Task.ConfigureAwait(false);
        }

        while (_all.TryDequeue(out var reader))
        {
            await reader.DisposeAsync().ConfigureAwait(false);
        }

        _closing.Dispose();
    }

    /// <summary>Waits for a slot; closing ends the wait with <see cref="ObjectDisposedException"/>.</summary>
    private async ValueTask WaitForSlotAsync(CancellationToken cancellationToken)
    {
        using var linked = cancellationToken.CanBeCanceled ? CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _closing.Token) : null;
        try
        {
            await _slots.WaitAsync(linked?.Token ?? _closing.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw SharedBlockRepository.Disposed();
        }
    }

    private void ThrowIfClosed()
    {
        if (Volatile.Read(ref _closed) != 0)
        {
            throw SharedBlockRepository.Disposed();
        }
    }
}
