using BlockDb.Sqlite;

namespace BlockDb.Engine;

/// <summary>
/// Ends a session's transactions once they are old even when the session makes no further call: the write
/// transaction at <see cref="BatchingOptions.CommitAfterMilliseconds"/> (<see cref="CommitPolicy.CommitIfOldAsync"/>, so an
/// idle session does not keep the write lock) and the read transaction at
/// <see cref="BatchingOptions.ReadTransactionMilliseconds"/> (so an idle session does not hold back checkpoints nor
/// hide other writers' commits [R2]). It works from the session's gate as background work, only when no call is
/// inside [G1] (else it looks again shortly; the call itself ends an old transaction). A failed age commit is thrown
/// by the next call or by dispose [B4].
/// </summary>
internal sealed class IdleTimer : IDisposable
{
    private const int BusyRetryMilliseconds = 20;
    private readonly CallGate _gate;
    private readonly CommitPolicy _policy;
    private readonly ReadTransaction? _reads;
    private readonly Timer _timer;

    /// <param name="gate">The session's gate.</param>
    /// <param name="policy">The session's commit policy.</param>
    /// <param name="transaction">The session's write transaction, which arms the timer when it opens.</param>
    /// <param name="reads">The session's read transaction (SQLite), which arms the timer when it opens; null when the engine has none.</param>
    /// <param name="commitMilliseconds">The write transaction's age limit, or <see langword="null"/> for none.</param>
    public IdleTimer(CallGate gate, CommitPolicy policy, EngineTransaction transaction, ReadTransaction? reads, int? commitMilliseconds)
    {
        _gate = gate;
        _policy = policy;
        _reads = reads;
        _timer = new Timer(static state => ((IdleTimer)state!).Fire(), this, Timeout.Infinite, Timeout.Infinite);
        if (commitMilliseconds is { } ms)
        {
            transaction.Opened = () => Schedule(ms);
        }

        if (_reads is { Enabled: true } r)
        {
            r.Opened = () => Schedule(r.Milliseconds);
        }
    }

    /// <summary>Test seam: awaited inside the gate, as background work, before the age commit (a test holds the work there to race calls against it).</summary>
    internal Func<Task>? BeforeAgeCommit { get; set; }

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

        _ = EndOldAsync();
    }

    /// <summary>Inside the gate as background work: the age commit (which may complete asynchronously on PostgreSQL), then the read transaction; leaves the gate at the end.</summary>
    private async Task EndOldAsync()
    {
        try
        {
            if (BeforeAgeCommit is { } hold)
            {
                await hold().ConfigureAwait(false);
            }

            if ((await _policy.CommitIfOldAsync().ConfigureAwait(false) ?? EndOldReads()) is { } remaining)
            {
                Schedule(remaining);
            }
        }
        catch (Exception e)
        {
            // A timer thread must not throw; the session's next call reports it [B4].
            _policy.Defer(e);
        }
        finally
        {
            _gate.Exit();
        }
    }

    /// <summary>Ends an old read transaction; returns the milliseconds until the open one is old, or null when none is open.</summary>
    private long? EndOldReads()
    {
        if (_reads is null || !_reads.IsOpen)
        {
            return null;
        }

        var left = _reads.Milliseconds - _reads.AgeMilliseconds;
        if (left > 0)
        {
            return left;
        }

        _reads.Abandon();
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
