
namespace BlockDb.PostgreSql.Sessions;

/// <summary>
/// A session's one-call-at-a-time gate, for calls that really wait on the network. Invariant: at most one party is
/// inside, a caller's call or the session's background work (the batch-age commit); once closed no one enters again.
/// A caller that meets background work waits for it without blocking a thread; a caller that meets another caller is
/// misusing the session and is told so at once; closing waits for whoever is inside, and every close (a second one
/// racing the first included) returns only once the first one's dispose has run (<see cref="DisposeOnce"/>).
/// </summary>
internal sealed class CallGate
{
    private readonly Lock _lock = new();
    private readonly DisposeOnce _closing = new();
    private State _state;
    private TaskCompletionSource? _left;

    private enum State
    {
        Idle,
        Caller,
        Background,
        Closed,
    }

    /// <summary>Whether the gate was closed (the session disposed).</summary>
    public bool IsClosed
    {
        get
        {
            lock (_lock)
            {
                return _state == State.Closed;
            }
        }
    }

    /// <summary>Enters for a caller's call. Completes synchronously unless background work is inside.</summary>
    /// <exception cref="ObjectDisposedException">The session is disposed.</exception>
    /// <exception cref="InvalidOperationException">Another call is running (sessions are not thread-safe).</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
    public async ValueTask EnterAsync(object session, CancellationToken cancellationToken)
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            Task wait;
            lock (_lock)
            {
                switch (_state)
                {
                    case State.Idle:
                        _state = State.Caller;
                        return;
                    case State.Closed:
                        throw new ObjectDisposedException(session.GetType().Name, "This BlockDb session was disposed.");
                    case State.Caller:
                        throw new InvalidOperationException("This BlockDb session is already running a call. Sessions are not thread-safe: await each call before the next, or open one session per task.");
                }

                wait = (_left ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
            }

            await wait.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Enters without waiting, for background work; false when someone is inside or the gate is closed.</summary>
    public bool TryEnterBackground()
    {
        lock (_lock)
        {
            if (_state != State.Idle)
            {
                return false;
            }

            _state = State.Background;
            return true;
        }
    }

    /// <summary>Leaves after <see cref="EnterAsync"/> or a successful <see cref="TryEnterBackground"/>, waking whoever waits.</summary>
    public void Exit()
    {
        TaskCompletionSource? left;
        lock (_lock)
        {
            _state = State.Idle;
            (left, _left) = (_left, null);
        }

        left?.TrySetResult();
    }

    /// <summary>
    /// Waits for the party inside to leave, closes the gate and runs <paramref name="dispose"/>, once: a later or
    /// concurrent close waits until that dispose has ended (and does not see its exception).
    /// </summary>
    public ValueTask CloseAsync(Func<ValueTask> dispose) => _closing.RunAsync(async () =>
    {
        while (true)
        {
            Task wait;
            lock (_lock)
            {
                if (_state == State.Idle)
                {
                    _state = State.Closed;
                    break;
                }

                wait = (_left ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
            }

            await wait.ConfigureAwait(false);
        }

        await dispose().ConfigureAwait(false);
    });
}
