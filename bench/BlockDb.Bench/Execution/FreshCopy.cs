namespace BlockDb.Bench.Execution;

/// <summary>
/// Every run gets its own byte copy of the pre-filled template (in DELETE journal mode), so no run sees
/// another's fragmentation, WAL file or journal mode.
/// </summary>
internal static class FreshCopy
{
    private static readonly string[] Suffixes = [string.Empty, "-wal", "-shm", "-journal"];

    public static string Create(string template, string folder, string name = "run.db")
    {
        Directory.CreateDirectory(folder);
        var path = Path.Combine(folder, name);
        Delete(path);
        File.Copy(template, path);
        return path;
    }

    public static void Delete(string path)
    {
        foreach (var suffix in Suffixes)
        {
            File.Delete(path + suffix);
        }
    }
}
