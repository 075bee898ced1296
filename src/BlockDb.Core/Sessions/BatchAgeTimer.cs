namespace BlockDb.Sessions;

/// <summary>
/// Ends a session's transactions once they are old even when the session makes no further call: the write batch at
/// <see cref="BatchingOptions.CommitAfterMilliseconds"/> (so an idle session does not keep the write lock) and the read
/// batch at <see cref="BatchingOptions.ReadTransactionMilliseconds"/> (so an idle session does not keep an old snapshot,
/// which would hold back WAL checkpoints and hide other writers' commits). The work runs on a timer thread from the
/// session's own gate: only when no call is inside (otherwise it looks again shortly; the call itself ends an old
/// transaction anyway). A failed age commit is thrown by the session's next call.
/// </summary>
internal sealed class BatchAgeTimer : IDisposable
{
    private const int BusyRetryMilliseconds = 20;
    private readonly SessionGate _gate;
    private readonly WriteBatch _batch;
    private readonly int? _commitMilliseconds;
    private readonly Timer _timer;

    /// <param name="gate">The session's gate.</param>
    /// <param name="batch">The session's write batch (and its read batch).</param>
    /// <param name="commitMilliseconds">The write batch's age limit, or <see langword="null"/> for none.</param>
    public BatchAgeTimer(SessionGate gate, WriteBatch batch, int? commitMilliseconds)
    {
        _gate = gate;
        _batch = batch;
        _commitMilliseconds = commitMilliseconds;
        _timer = new Timer(static state => ((BatchAgeTimer)state!).Fire(), this, Timeout.Infinite, Timeout.Infinite);
        if (commitMilliseconds is { } ms)
        {
            batch.Opened = () => Schedule(ms);
        }

        if (batch.Reads.Enabled)
        {
            batch.Reads.Opened = () => Schedule(batch.Reads.Milliseconds);
        }
    }

    public void Dispose() => _timer.Dispose();

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
            if (Remaining() is { } remaining)
            {
                Schedule(remaining);
            }
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

    /// <summary>Ends what is old; returns how long until the open transaction will be, or <see langword="null"/> when none is open.</summary>
    private long? Remaining()
    {
        if (_batch.IsOpen && _commitMilliseconds is { } ms)
        {
            var left = ms - _batch.AgeMilliseconds;
            if (left > 0)
            {
                return left;
            }

            _batch.Commit();
            return null;
        }

        var reads = _batch.Reads;
        if (reads.IsOpen)
        {
            var left = reads.Milliseconds - reads.AgeMilliseconds;
            if (left > 0)
            {
                return left;
            }

            reads.Abandon();
        }

        return null;
    }

    private void Schedule(long milliseconds)
    {
        try
        {
            _timer.Change(Math.Max(1, milliseconds), Timeout.Infinite);
        }
        catch (ObjectDisposedException)
        {
            // The session was disposed meanwhile; its dispose ends the transactions.
        }
    }
}
