using BlockDb.Engine;

namespace BlockDb.Tests.Engine;

/// <summary>
/// The session's one gate (<see cref="CallGate"/>, invariants G1 and G2 in docs/ARCHITECTURE.md): one party inside at a
/// time, a caller waits behind background work (asynchronously) and is refused beside another caller, and closing waits
/// for the party inside. The sessions' own tests (SessionGateTests, BatchEndingTests, the Disposal tests) prove the same
/// through the public calls; these race the gate itself, including <see cref="CallGate.EnterAsync"/>, which PostgreSQL
/// takes in a later step.
/// </summary>
public sealed class CallGateTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_caller_and_background_work_racing_for_the_gate_are_never_inside_together()
    {
        var gate = new CallGate();
        var inside = 0;
        var overlaps = 0;
        var callerEntries = 0;
        var backgroundEntries = 0;
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(2));

        void Inside()
        {
            if (Interlocked.Increment(ref inside) != 1)
            {
                Interlocked.Increment(ref overlaps);
            }

            Thread.SpinWait(50);
            Interlocked.Decrement(ref inside);
        }

        var background = Task.Run(() =>
        {
            while (!stop.IsCancellationRequested)
            {
                if (gate.TryEnterBackground())
                {
                    Inside();
                    backgroundEntries++;
                    gate.Exit();
                }
            }
        });
        var caller = Task.Run(async () =>
        {
            for (var i = 0; !stop.IsCancellationRequested; i++)
            {
                if (i % 2 == 0)
                {
                    if (!gate.TryEnter(this, CancellationToken.None))
                    {
                        await gate.EnterAsync(this, CancellationToken.None);
                    }
                }
                else
                {
                    await gate.EnterAsync(this, CancellationToken.None);
                }

                Inside();
                callerEntries++;
                gate.Exit();
            }
        });

        await Task.WhenAll(background, caller).WaitAsync(Wait);
        Assert.Equal(0, overlaps);
        Assert.True(callerEntries > 0 && backgroundEntries > 0, $"caller {callerEntries}, background {backgroundEntries}");
    }

    [Fact]
    public async Task A_caller_waits_behind_background_work_and_enters_when_it_leaves()
    {
        var gate = new CallGate();
        Assert.True(gate.TryEnterBackground());
        Assert.False(gate.TryEnter(this, CancellationToken.None)); // does not wait: the caller goes on to EnterAsync
        var entering = gate.EnterAsync(this, CancellationToken.None).AsTask();
        var blocking = Task.Run(() => gate.EnterAsync(this, CancellationToken.None).AsTask());
        await Task.Delay(50);
        Assert.False(entering.IsCompleted);
        Assert.False(blocking.IsCompleted);

        gate.Exit();

        // One of the two is inside; the other is a concurrent caller, refused at once. Either may finish first (the
        // refusal can come before the entered call's task completes), so both are awaited before judging.
        Task[] callers = [entering, blocking];
        await Task.WhenAll(callers.Select(t => t.ContinueWith(static _ => { }, TaskScheduler.Default))).WaitAsync(Wait);
        _ = Assert.Single(callers, t => t.IsCompletedSuccessfully);
        var refused = Assert.Single(callers, t => t.IsFaulted);
        Assert.IsType<InvalidOperationException>(refused.Exception!.InnerException);
    }

    [Fact]
    public async Task A_caller_waiting_behind_background_work_is_cancelled_by_its_token()
    {
        var gate = new CallGate();
        Assert.True(gate.TryEnterBackground());
        using var cancel = new CancellationTokenSource();
        var entering = gate.EnterAsync(this, cancel.Token).AsTask();
        var blocking = Task.Run(() => gate.EnterAsync(this, cancel.Token).AsTask());
        await Task.Delay(50);
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => entering.WaitAsync(Wait));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => blocking.WaitAsync(Wait));

        gate.Exit();
        Assert.True(gate.TryEnter(this, CancellationToken.None));
        gate.Exit();
    }

    [Fact]
    public async Task Closing_waits_for_the_caller_inside_and_then_refuses_every_caller()
    {
        var gate = new CallGate();
        await gate.EnterAsync(this, CancellationToken.None);
        var disposed = 0;
        var closing = Task.Run(() => gate.Close(() => disposed++));
        var closingAsync = Task.Run(() => gate.CloseAsync(() => disposed++).AsTask());
        await Task.Delay(50);
        Assert.False(closing.IsCompleted);
        Assert.False(closingAsync.IsCompleted);

        gate.Exit();
        await Task.WhenAll(closing, closingAsync).WaitAsync(Wait);
        Assert.Equal(1, disposed);
        Assert.True(gate.IsClosed);
        Assert.Throws<ObjectDisposedException>(() => gate.TryEnter(this, CancellationToken.None));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => gate.EnterAsync(this, CancellationToken.None).AsTask());
        Assert.False(gate.TryEnterBackground());
    }

    [Fact]
    public void Closing_from_inside_the_callers_own_call_is_refused()
    {
        var gate = new CallGate();
        Assert.True(gate.TryEnter(this, CancellationToken.None));
        Assert.Throws<InvalidOperationException>(() => gate.Close(() => { }));
        gate.Exit();
        gate.Close(() => { });
        Assert.True(gate.IsClosed);
    }
}
