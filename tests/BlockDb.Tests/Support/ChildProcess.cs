using System.Diagnostics;

namespace BlockDb.Tests.Support;

/// <summary>Runs BlockDb.CrashWriter (built beside the tests) as a separate process and collects its output lines.</summary>
internal sealed class ChildProcess : IDisposable
{
    private readonly Process _process;
    private readonly List<string> _lines = [];
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public ChildProcess(params string[] args)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "BlockDb.CrashWriter.dll"));
        foreach (var arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        _process = new Process { StartInfo = start };
        _process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                _ready.TrySetResult();
                return;
            }

            lock (_lines)
            {
                _lines.Add(e.Data);
            }

            if (e.Data is "READY" or "LOCKED")
            {
                _ready.TrySetResult();
            }
        };
        _process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                lock (_lines)
                {
                    _lines.Add("stderr: " + e.Data);
                }
            }
        };
        _process.Start();
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    public Task Ready => _ready.Task;

    public IReadOnlyList<string> Lines
    {
        get
        {
            lock (_lines)
            {
                return [.. _lines];
            }
        }
    }

    /// <summary>Waits for the process to exit on its own and for its output to be read; returns its exit code.</summary>
    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        await _process.WaitForExitAsync(cts.Token);
        return _process.ExitCode;
    }

    /// <summary>SIGKILL on Linux: the process gets no chance to commit, flush or clean up.</summary>
    public void Kill()
    {
        _process.Kill(entireProcessTree: true);
        _process.WaitForExit();
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            Kill();
        }

        _process.Dispose();
    }
}
