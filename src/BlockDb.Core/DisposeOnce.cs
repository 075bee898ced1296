namespace BlockDb;

/// <summary>
/// The one way BlockDb's databases, sessions and shared sessions dispose: the work runs once, and every dispose
/// call (the first, one racing it on another thread, a later one, sync or async) returns only when that work has ended,
/// so no caller is told "disposed" while a call is still in flight or the file or connection is still open.
/// </summary>
/// <remarks>
/// Invariant [G3]: <see cref="Begun"/> becomes true exactly once, with a full fence, before the work starts (so an object
/// that registers a session and then checks <see cref="Begun"/>, while its dispose sets it and then reads the
/// registrations, always has one side see the other). The caller that runs the work gets what it throws; every other
/// call waits for it to end and returns normally (the failure is reported once). A dispose called from inside the work
/// itself would wait for itself: the work must not dispose its own owner.
/// </remarks>
internal sealed class DisposeOnce
{
    private Task? _ended;

    /// <summary>Whether a dispose has begun (new calls are refused from then on).</summary>
    public bool Begun => Volatile.Read(ref _ended) is not null;

    /// <summary>Runs <paramref name="work"/> if no dispose has begun, else waits until the one that began has ended.</summary>
    /// <param name="work">The dispose's work.</param>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <remarks>Whatever <paramref name="work"/> throws passes to this caller only.</remarks>
    public void Run(Action work)
    {
        ArgumentNullException.ThrowIfNull(work);
        if (TryBegin() is not { } ended)
        {
            Volatile.Read(ref _ended)!.GetAwaiter().GetResult();
            return;
        }

        try
        {
            work();
        }
        finally
        {
            ended.SetResult();
        }
    }

    /// <inheritdoc cref="Run"/>
    public async ValueTask RunAsync(Func<ValueTask> work)
    {
        ArgumentNullException.ThrowIfNull(work);
        if (TryBegin() is not { } ended)
        {
            await Volatile.Read(ref _ended)!.ConfigureAwait(false);
            return;
        }

        try
        {
            await work().ConfigureAwait(false);
        }
        finally
        {
            ended.SetResult();
        }
    }

    /// <summary>The completion to set when the work ends, for the one caller that begins it; null for every other.</summary>
    private TaskCompletionSource? TryBegin()
    {
        if (Volatile.Read(ref _ended) is not null)
        {
            return null;
        }

        var ended = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        return Interlocked.CompareExchange(ref _ended, ended.Task, null) is null ? ended : null;
    }
}
