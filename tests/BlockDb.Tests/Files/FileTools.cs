using System.Diagnostics;

namespace BlockDb.Tests.Files;

/// <summary>Makes the file system entries .NET has no API for, with the system's own tools (coreutils).</summary>
internal static class FileTools
{
    /// <summary>A hard link <paramref name="link"/> to the existing file <paramref name="existing"/> (<c>ln</c>).</summary>
    public static void HardLink(string existing, string link) => Run("ln", existing, link);

    /// <summary>A FIFO (named pipe) at <paramref name="path"/> (<c>mkfifo</c>): opening it to read blocks until a writer opens it.</summary>
    public static void Fifo(string path) => Run("mkfifo", path);

    private static void Run(string tool, params string[] arguments)
    {
        var start = new ProcessStartInfo(tool) { RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"{tool} did not start");
        var errors = process.StandardError.ReadToEnd();
        process.WaitForExit();
        Assert.True(process.ExitCode == 0, $"{tool} {string.Join(' ', arguments)} failed: {errors}");
    }
}
