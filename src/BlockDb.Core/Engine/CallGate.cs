using System.Runtime.CompilerServices;

namespace BlockDb.Engine;

/// <summary>
/// A session's one-call-at-a-time gate [G1]: one party inside at a time, a caller's call or the session's own background
/// work (the idle timer), and once closed no one enters again. A caller that meets background work waits for it to
/// leave; a caller that meets another caller is misusing the session and is told so at once. Closing waits for whoever
/// is inside and is refused from inside the session's own call [G2]; every close returns only once the first one's
/// dispose has run (<see cref="DisposeOnce"/>). Entering an idle gate is one compare-and-swap and allocates nothing.
/// </summary>
internal sealed class CallGate
{
    private const int Idle = 0;
    private const int Caller = 1;
    private const int Closed = 2;
    private const int Background = 3;
    private readonly DisposeOnce _closing = new();
    private int _state;
    private int _owner;
    private TaskCompletionSource? _left;

    /// <summary>Whether the gate was closed (the session disposed).</summary>
    public bool IsClosed => Volatile.Read(ref _state) == Closed;

    /// <summary>
    /// Enters an idle gate for a caller's call (true) in one compare-and-swap; false, without waiting, when background
    /// work (the idle timer's age commit) is inside: the call then awaits <see cref="EnterAsync"/>, never blocking its
    /// thread behind that work (on PostgreSQL a server round trip).
    /// </summary>
    /// <exception cref="ObjectDisposedException">The session is disposed.</exception>
    /// <exception cref="InvalidOperationException">Another call is running (sessions are not thread-safe).</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryEnter(object session, CancellationToken cancellationToken)
    {
        if (!TryTake(session))
        {
            return false;
        }

        Entered(cancellationToken);
        return true;
    }

    /// <summary>Enters for a caller's call; completes synchronously unless background work is inside, which it awaits (the caller's thread is then not the call's owner [G2]).</summary>
    /// <inheritdoc cref="TryEnter(object, CancellationToken)" path="/exception"/>
    public ValueTask EnterAsync(object session, CancellationToken cancellationToken) =>
        TryEnter(session, cancellationToken) ? ValueTask.CompletedTask : WaitAndEnterAsync(session, cancellationToken);

    private async ValueTask WaitAndEnterAsync(object session, CancellationToken cancellationToken)
    {
        do
        {
            var left = WhenLeft();
            if (Volatile.Read(ref _state) == Background)
            {
                await left.WaitAsync(cancellationToken).ConfigureAwait(false);
            }
        }
        while (!TryTake(session));

        Entered(cancellationToken);
        Detach();
    }

    /// <summary>Takes an idle gate (true), finds background work inside (false), or throws for a closed gate or a concurrent call.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryTake(object session)
    {
        var state = Interlocked.CompareExchange(ref _state, Caller, Idle);
        if (state is Idle or Background)
        {
            return state == Idle;
        }

        ObjectDisposedException.ThrowIf(state == Closed, session);
        throw Errors.ConcurrentCall();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Entered(CancellationToken cancellationToken)
    {
        Volatile.Write(ref _owner, Environment.CurrentManagedThreadId);
        if (cancellationToken.IsCancellationRequested)
        {
            Exit();
            cancellationToken.ThrowIfCancellationRequested();
        }
    }

    /// <summary>
    /// The call inside goes on without its caller's thread (it awaits an engine's round trip): a dispose from that thread
    /// is then not a dispose from inside the call [G2], and waits for it like any other.
    /// </summary>
    public void Detach() => Volatile.Write(ref _owner, 0);

    /// <summary>Enters without waiting, for background work (the idle timer); false when someone is inside or the gate is closed.</summary>
    public bool TryEnterBackground() => Interlocked.CompareExchange(ref _state, Background, Idle) == Idle;

    /// <summary>Leaves after an enter, waking whoever waits.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Exit()
    {
        Volatile.Write(ref _owner, 0);

        // A full fence: the state is Idle before the waiter is read, so a waiter installed later sees Idle when it looks again.
        Interlocked.Exchange(ref _state, Idle);
        if (Volatile.Read(ref _left) is not null)
        {
            Interlocked.Exchange(ref _left, null)?.TrySetResult();
        }
    }

    /// <summary>
    /// Waits for the party inside to leave, closes the gate and runs <paramref name="dispose"/>, once: a later or
    /// concurrent close waits until that dispose has run (and does not see its exception).
    /// </summary>
    /// <exception cref="InvalidOperationException">Called from inside one of the session's own calls (it would wait for itself) [G2].</exception>
    public void Close(Action dispose)
    {
        ThrowIfInsideOwnCall();
        _closing.Run(() =>
        {
            while (!TryClose())
            {
                var left = WhenLeft();
                if (Volatile.Read(ref _state) != Idle)
                {
                    left.Wait();
                }
            }

            dispose();
        });
    }

    /// <inheritdoc cref="Close"/>
    public ValueTask CloseAsync(Action dispose) => CloseAsync(() =>
    {
        dispose();
        return ValueTask.CompletedTask;
    });

    /// <inheritdoc cref="Close"/>
    public ValueTask CloseAsync(Func<ValueTask> dispose)
    {
        ThrowIfInsideOwnCall();
        return _closing.RunAsync(async () =>
        {
            while (!TryClose())
            {
                var left = WhenLeft();
                if (Volatile.Read(ref _state) != Idle)
                {
                    await left.ConfigureAwait(false);
                }
            }

            await dispose().ConfigureAwait(false);
        });
    }

    private bool TryClose() => Interlocked.CompareExchange(ref _state, Closed, Idle) == Idle;

    /// <summary>Completes when the party inside leaves; the caller looks at the state again after taking it (see <see cref="Exit"/>).</summary>
    private Task WhenLeft()
    {
        var left = Volatile.Read(ref _left);
        if (left is null)
        {
            var created = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            left = Interlocked.CompareExchange(ref _left, created, null) ?? created;
        }

        return left.Task;
    }

    private void ThrowIfInsideOwnCall()
    {
        if (Volatile.Read(ref _state) == Caller && Volatile.Read(ref _owner) == Environment.CurrentManagedThreadId)
        {
            throw Errors.DisposeInsideOwnCall();
        }
    }
}
