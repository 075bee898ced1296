namespace BlockDb.Tests.Support;

/// <summary>What this process holds open (Linux: /proc/self/fd).</summary>
internal static class ProcessFiles
{
    /// <summary>How many of this process's descriptors are open on <paramref name="path"/> (made full against the working folder).</summary>
    public static int Descriptors(string path)
    {
        var full = Path.GetFullPath(path);
        return Directory.GetFiles("/proc/self/fd").Count(fd =>
        {
            try
            {
                return new FileInfo(fd).LinkTarget == full;
            }
            catch (IOException)
            {
                return false;
            }
        });
    }
}
