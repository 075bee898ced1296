namespace BlockDb.Sessions;

/// <summary>
/// A session's one-call-at-a-time gate. Invariant: at most one party is inside at a time, a caller's call or the
/// session's own background work (the batch-age timer's commit), and once <see cref="Close"/> has run no one enters
/// again. A caller that meets background work waits for it (it is bounded by <c>busy_timeout</c>); a caller that
/// meets another caller's call is misusing the session and is told so. Closing waits for whoever is inside, so a
/// session is never disposed under a running call, and every close (a second one racing the first, sync or async)
/// returns only once the first one's dispose has run (<see cref="DisposeOnce"/>).
/// </summary>
internal sealed class SessionGate
{
    private const int Idle = 0;
    private const int Caller = 1;
    private const int Closed = 2;
    private const int Background = 3;
    private readonly DisposeOnce _closing = new();
    private int _state;
    private int _owner;

    /// <summary>Whether the gate was closed (the session disposed).</summary>
    public bool IsClosed => Volatile.Read(ref _state) == Closed;

    /// <summary>Enters for a caller's call, first waiting for background work inside.</summary>
    /// <exception cref="ObjectDisposedException">The session is disposed.</exception>
    /// <exception cref="InvalidOperationException">Another call is running (sessions are not thread-safe).</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
    public void Enter(object session, CancellationToken cancellationToken)
    {
        var spin = default(SpinWait);
        int state;
        while ((state = Interlocked.CompareExchange(ref _state, Caller, Idle)) == Background)
        {
            cancellationToken.ThrowIfCancellationRequested();
            spin.SpinOnce(sleep1Threshold: 20);
        }

        if (state != Idle)
        {
            ObjectDisposedException.ThrowIf(state == Closed, session);
            throw new InvalidOperationException("This BlockDb session is already running a call. Sessions are not thread-safe: await each call before the next, or open one session per task.");
        }

        Volatile.Write(ref _owner, Environment.CurrentManagedThreadId);
        if (cancellationToken.IsCancellationRequested)
        {
            Exit();
            cancellationToken.ThrowIfCancellationRequested();
        }
    }

    /// <summary>Enters without waiting, for background work (the batch-age timer); false when someone is inside or the gate is closed.</summary>
    public bool TryEnterBackground() => Interlocked.CompareExchange(ref _state, Background, Idle) == Idle;

    /// <summary>Leaves after <see cref="Enter"/> or a successful <see cref="TryEnterBackground"/>.</summary>
    public void Exit()
    {
        Volatile.Write(ref _owner, 0);
        Volatile.Write(ref _state, Idle);
    }

    /// <summary>
    /// Waits for the party inside to leave, closes the gate and runs <paramref name="dispose"/>, once: a later or
    /// concurrent close waits until that dispose has run (and does not see its exception).
    /// </summary>
    /// <exception cref="InvalidOperationException">Called from inside one of the session's own calls (it would wait for itself).</exception>
    public void Close(Action dispose)
    {
        ThrowIfInsideOwnCall();
        _closing.Run(() =>
        {
            var spin = default(SpinWait);
            while (!TryClose(dispose))
            {
                spin.SpinOnce(sleep1Threshold: 20);
            }
        });
    }

    /// <inheritdoc cref="Close"/>
    public async ValueTask CloseAsync(Action dispose)
    {
        ThrowIfInsideOwnCall();
        await _closing.RunAsync(async () =>
        {
            while (!TryClose(dispose))
            {
                await Task.Delay(1).ConfigureAwait(false);
            }
        }).ConfigureAwait(false);
    }

    /// <summary>Closes an idle gate and disposes (true), or says someone is inside (false). Only the one close that began runs it.</summary>
    private bool TryClose(Action dispose)
    {
        if (Interlocked.CompareExchange(ref _state, Closed, Idle) != Idle)
        {
            return false;
        }

        dispose();
        return true;
    }

    private void ThrowIfInsideOwnCall()
    {
        if (Volatile.Read(ref _state) == Caller && Volatile.Read(ref _owner) == Environment.CurrentManagedThreadId)
        {
            throw new InvalidOperationException("A BlockDb session cannot be disposed from inside one of its own calls (the dispose would wait for the call that makes it); dispose it after the call returns.");
        }
    }
}
