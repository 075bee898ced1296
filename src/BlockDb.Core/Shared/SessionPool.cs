using System.Collections.Concurrent;
using BlockDb.Engine;

namespace BlockDb.Shared;

/// <summary>
/// A pool of sessions lent one call at a time (the shared session's readers, and on PostgreSQL its writers): at most <c>maxSessions</c> leases at
/// once, each on a session of its own, opened on demand and kept for reuse. A call rents a lease
/// (<c>using var lease = await pool.RentAsync(ct)</c>) and makes its call on <see cref="Lease.Session"/>; no lambda per call.
/// </summary>
/// <remarks>
/// Invariants: a session is lent to one lease at a time (taken from <c>_idle</c>, given back by the lease's dispose);
/// every session opened is in <c>_all</c>, and only <see cref="DisposeAsync"/> disposes them, after <c>_inFlight</c>
/// (rents between their entry check and their lease's dispose) has reached zero; closing wakes the rents waiting for a
/// slot, which fail with <see cref="ObjectDisposedException"/>. No call is left pending once <see cref="DisposeAsync"/> returns [S3].
/// </remarks>
internal sealed class SessionPool(Func<ISessionHandle> open, int maxSessions)
{
    private readonly ConcurrentBag<ISessionHandle> _idle = [];
    private readonly ConcurrentQueue<ISessionHandle> _all = new();
    private readonly SemaphoreSlim _slots = new(maxSessions);
    private readonly CancellationTokenSource _closing = new();
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _inFlight;
    private int _closed;

    /// <summary>Rents a session for one call; the lease's dispose gives it back.</summary>
    /// <exception cref="ObjectDisposedException">The pool is closed.</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled while waiting for a slot.</exception>
    public async ValueTask<Lease> RentAsync(CancellationToken cancellationToken)
    {
        ThrowIfClosed();
        Interlocked.Increment(ref _inFlight);
        try
        {
            ThrowIfClosed();
            await WaitForSlotAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                ThrowIfClosed();
                if (!_idle.TryTake(out var session))
                {
                    session = open();
                    _all.Enqueue(session);
                }

                return new Lease(this, session);
            }
            catch
            {
                _slots.Release();
                throw;
            }
        }
        catch
        {
            Left();
            throw;
        }
    }

    /// <summary>Stops lending, wakes waiting rents, waits for the leases out, then disposes every session.</summary>
    public async ValueTask DisposeAsync()
    {
        // A full fence, so the read of _inFlight below cannot move before this write (a rent that entered meanwhile
        // sees the pool closed, or is counted).
        Interlocked.Exchange(ref _closed, 1);
        await _closing.CancelAsync().ConfigureAwait(false);
        if (Volatile.Read(ref _inFlight) != 0)
        {
            await _drained.Task.ConfigureAwait(false);
        }

        while (_all.TryDequeue(out var session))
        {
            await session.DisposeAsync().ConfigureAwait(false);
        }

        _closing.Dispose();
    }

    private void Return(ISessionHandle session)
    {
        _idle.Add(session);
        _slots.Release();
        Left();
    }

    private void Left()
    {
        if (Interlocked.Decrement(ref _inFlight) == 0 && Volatile.Read(ref _closed) != 0)
        {
            _drained.TrySetResult();
        }
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
            throw Errors.SharedDisposed();
        }
    }

    private void ThrowIfClosed()
    {
        if (Volatile.Read(ref _closed) != 0)
        {
            throw Errors.SharedDisposed();
        }
    }

    /// <summary>One session lent for one call; dispose it once, when the call has ended.</summary>
    public readonly struct Lease(SessionPool pool, ISessionHandle session) : IDisposable
    {
        /// <summary>The lent session.</summary>
        public ISessionHandle Session => session;

        public void Dispose() => pool.Return(session);
    }
}
