using System.Diagnostics;

namespace BlockDb.Bench.Execution;

/// <summary>Runs a child process and captures its output.</summary>
internal static class ProcessRunner
{
    public static (int ExitCode, string Stdout, string Stderr) Run(string file, IEnumerable<string> arguments, string? workingDirectory = null, int timeoutMs = 3_600_000)
    {
        var info = new ProcessStartInfo(file)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory ?? Environment.CurrentDirectory,
        };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        using var process = Process.Start(info) ?? throw new InvalidOperationException($"Could not start {file}.");
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(timeoutMs))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{file} did not finish within {timeoutMs / 1000} s.");
        }

        return (process.ExitCode, stdout.GetAwaiter().GetResult(), stderr.GetAwaiter().GetResult());
    }

    /// <summary>The first line of a tool's version output, or <see langword="null"/> when the tool is missing.</summary>
    public static string? ToolVersion(string tool, string argument)
    {
        try
        {
            var (code, stdout, stderr) = Run(tool, [argument], timeoutMs: 10_000);
            var text = (stdout + stderr).Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).FirstOrDefault();
            return code == 0 ? text : null;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return null;
        }
    }
}
