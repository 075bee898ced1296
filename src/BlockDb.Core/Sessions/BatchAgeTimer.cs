namespace BlockDb.Sessions;

/// <summary>
/// Commits a session's open batch once it is <see cref="BatchingOptions.CommitAfterMilliseconds"/> old even when the
/// session makes no further call, so an idle session does not keep the write lock. The commit runs on a timer
/// thread from the session's own gate: only when no call is inside (otherwise it looks again shortly, and the
/// call's own write commits an old batch anyway). A failed age commit is thrown by the session's next call.
/// </summary>
internal sealed class BatchAgeTimer : IDisposable
{
    private const int BusyRetryMilliseconds = 20;
    private readonly SessionGate _gate;
    private readonly WriteBatch _batch;
    private readonly int _milliseconds;
    private readonly Timer _timer;

    public BatchAgeTimer(SessionGate gate, WriteBatch batch, int milliseconds)
    {
        _gate = gate;
        _batch = batch;
        _milliseconds = milliseconds;
        _timer = new Timer(static state => ((BatchAgeTimer)state!).Fire(), this, Timeout.Infinite, Timeout.Infinite);
        batch.Opened = Arm;
    }

    public void Dispose() => _timer.Dispose();

    private void Arm() => Schedule(_milliseconds);

    private void Fire()
    {
        if (!_gate.TryEnterBackground())
        {
            if (!_gate.IsClosed)
            {
                Schedule(BusyRetryMilliseconds);
            }

            return;
        }

        try
        {
            if (!_batch.IsOpen)
            {
                return;
            }

            var remaining = _milliseconds - _batch.AgeMilliseconds;
            if (remaining > 0)
            {
                Schedule(remaining);
                return;
            }

            _batch.Commit();
        }
        catch (Exception e)
        {
            // A timer thread must not throw; the session's next call reports it.
            _batch.Defer(e);
        }
        finally
        {
            _gate.Exit();
        }
    }

    private void Schedule(long milliseconds)
    {
        try
        {
            _timer.Change(Math.Max(1, milliseconds), Timeout.Infinite);
        }
        catch (ObjectDisposedException)
        {
            // The session was disposed meanwhile; its dispose ends the batch.
        }
    }
}
