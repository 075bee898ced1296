using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;

namespace BlockDb.Engine;

/// <summary>
/// One public call's bookkeeping, as a scope (<c>using var call = new CallScope(site, name);</c>) instead of a lambda
/// around the operation: the metrics' start and end, the gate entered and left [G1], the token checked, a failed age
/// commit thrown first [B4], and on failure the lost-batch check (in the exception filter, before anything unwinds [B2])
/// and the engine's clean-up after it [B1]. A struct: a synchronous call allocates nothing. A call whose engine work
/// completes later (PostgreSQL) hands its scope to the async rest of the call (<see cref="Hand"/>), which ends it; an
/// async call ends a failure with <see cref="Rethrow"/>.
/// </summary>
/// <example>
/// <code>
/// using var call = new CallScope(_site, nameof(FindBlockAsync));
/// try { if (!call.TryEnter(this, cancellationToken)) { return FindLaterAsync(call.Hand(), ...); } return new(Find(...)); }
/// catch (Exception e) when (call.Failing(e)) { return call.Failed&lt;long?&gt;(); }
/// </code>
/// </example>
internal struct CallScope : IDisposable
{
    private readonly CallSite _site;
    private readonly string _operation;
    private readonly long _started;
    private Exception? _failure;
    private bool _entered;
    private bool _handed;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public CallScope(CallSite site, string operation)
    {
        _site = site;
        _operation = operation;
        _started = site.Start();
    }

    /// <summary>
    /// A hot call's entry: enters an idle gate for <paramref name="session"/> and starts the call (true); false when
    /// background work is inside, and the call goes on in its async rest (<see cref="Hand"/>), which enters with
    /// <see cref="EnterAsync"/>.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The session is disposed.</exception>
    /// <exception cref="InvalidOperationException">Another call is running.</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryEnter(object session, CancellationToken cancellationToken)
    {
        if (!_site.Gate.TryEnter(session, cancellationToken))
        {
            return false;
        }

        Entered(cancellationToken);
        return true;
    }

    /// <summary>
    /// An async call's entry, first half: enters the gate for <paramref name="session"/>, awaiting background work inside
    /// without blocking the thread. The second half, <see cref="Entered"/>, follows at once (the scope is a struct that an
    /// async method cannot change, so the call marks itself entered): <c>await call.EnterAsync(this, ct); call.Entered(ct);</c>
    /// </summary>
    /// <inheritdoc cref="TryEnter" path="/exception"/>
    public readonly ValueTask EnterAsync(object session, CancellationToken cancellationToken) => _site.Gate.EnterAsync(session, cancellationToken);

    /// <summary>After <see cref="EnterAsync"/>: the call is inside the gate (its dispose leaves it) and starts; throws an age commit's failure [B4].</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Entered(CancellationToken cancellationToken)
    {
        _entered = true;
        _site.Policy.CallStarted(cancellationToken);
    }

    /// <summary>The exception filter of a failed call: records the failure, the lost batch's report in its place when the engine rolled the batch back [B2]. Runs no statement; always true.</summary>
    public bool Failing(Exception e)
    {
        _failure = _entered ? _site.Policy.Failing(e) : e;
        return true;
    }

    /// <summary>The failed call's task, after the engine's clean-up [B1] (the failure stays in the task, as an async method's would).</summary>
    public ValueTask<T> Failed<T>() => ValueTask.FromException<T>(Fail());

    /// <inheritdoc cref="Failed{T}"/>
    public ValueTask Failed() => ValueTask.FromException(Fail());

    private Exception Fail()
    {
        if (_entered)
        {
            _failure = _site.Policy.AfterFailedCall(_failure!);
        }

        _site.Failed(_operation, _failure!);
        return _failure!;
    }

    /// <summary>In an async call's catch, after <see cref="Failing"/>: the engine's clean-up [B1], then throws the failure to report (the stack trace kept).</summary>
    public void Rethrow() => ExceptionDispatchInfo.Throw(Fail());

    /// <summary>Gives the call to the async rest of it (a copy that the rest disposes); this scope's dispose then does nothing. The caller's thread is free from here (<see cref="CallGate.Detach"/>). A call not yet entered (<see cref="TryEnter"/> met background work) enters in its rest.</summary>
    public CallScope Hand()
    {
        if (_entered)
        {
            _site.Gate.Detach();
        }

        var rest = this;
        _handed = true;
        return rest;
    }

    /// <summary>Before an async call awaits <paramref name="task"/>: when it is pending, the caller's thread is free while the call goes on (<see cref="CallGate.Detach"/>).</summary>
    public readonly ValueTask<T> WhilePending<T>(ValueTask<T> task)
    {
        if (!task.IsCompleted)
        {
            _site.Gate.Detach();
        }

        return task;
    }

    /// <inheritdoc cref="WhilePending{T}(ValueTask{T})"/>
    public readonly ValueTask WhilePending(ValueTask task)
    {
        if (!task.IsCompleted)
        {
            _site.Gate.Detach();
        }

        return task;
    }

    /// <summary>Leaves the gate (when entered) and ends the call's metrics, unless the call was handed on.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Dispose()
    {
        if (_handed)
        {
            return;
        }

        if (_entered)
        {
            _site.Policy.CallEnded();
            _site.Gate.Exit();
        }

        _site.End(_operation, _started, _failure);
    }
}
