using System.Diagnostics;

namespace BlockDb.Tests.Support;

/// <summary>A size-limited tmpfs mounted for one test (the machine's tests run as root; CI too), unmounted on dispose.</summary>
internal sealed class SmallDisk : IDisposable
{
    private SmallDisk(string path) => Path = path;

    public string Path { get; }

    public static SmallDisk Mount(string path, int sizeKiB)
    {
        Directory.CreateDirectory(path);
        Run("mount", "-t", "tmpfs", "-o", $"size={sizeKiB}k", "tmpfs", path);
        return new SmallDisk(path);
    }

    public void Dispose() => Run("umount", "-l", Path);

    internal static void Run(string command, params string[] args)
    {
        var start = new ProcessStartInfo(command) { RedirectStandardError = true, UseShellExecute = false };
        foreach (var arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        using var process = Process.Start(start)!;
        var error = process.StandardError.ReadToEnd();
        process.WaitForExit();
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"{command} {string.Join(' ', args)} failed ({process.ExitCode}): {error}. These fault tests need root (mount, chattr), as on CI.");
        }
    }
}

/// <summary>Makes a file immutable (chattr +i) so even root cannot write it; undone on dispose.</summary>
internal sealed class ReadOnlyFile : IDisposable
{
    private readonly string _path;

    private ReadOnlyFile(string path) => _path = path;

    public static ReadOnlyFile Protect(string path)
    {
        SmallDisk.Run("chattr", "+i", path);
        return new ReadOnlyFile(path);
    }

    public void Dispose() => SmallDisk.Run("chattr", "-i", _path);
}
