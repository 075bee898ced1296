using System.Diagnostics;
using BlockDb.Stress;

namespace BlockDb.Tests.Support;

/// <summary>Runs one mode of the stress program (bench/BlockDb.Stress, built beside the tests) as a child process.</summary>
internal static class StressProgram
{
    /// <summary>The program's assembly in the test output folder.</summary>
    public static string Assembly => typeof(StressRun).Assembly.Location;

    /// <summary>Runs <c>dotnet <paramref name="assembly"/> <paramref name="args"/></c> and returns its exit code and output.</summary>
    public static async Task<(int ExitCode, string Stdout, string Stderr)> RunAsync(string assembly, IReadOnlyList<string> args, IReadOnlyDictionary<string, string>? environment = null)
    {
        var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        start.ArgumentList.Add(assembly);
        foreach (var argument in args)
        {
            start.ArgumentList.Add(argument);
        }

        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }

        using var process = Process.Start(start)!;
        var stderr = process.StandardError.ReadToEndAsync();
        var stdout = await process.StandardOutput.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        await process.WaitForExitAsync(timeout.Token);
        return (process.ExitCode, stdout, await stderr);
    }
}
