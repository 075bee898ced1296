using System.Security.Cryptography;

namespace BlockDb.Bench.Micro;

/// <summary>Real SHA-256 hashes (44-character base64) and a pre-filled template database, built once per process.</summary>
internal static class MicroData
{
    public const long BlockSize = 102_400;

    private static readonly Dictionary<int, string> Templates = [];

    public static string Hash(int domain, int index)
    {
        Span<byte> content = stackalloc byte[8];
        BitConverter.TryWriteBytes(content, domain);
        BitConverter.TryWriteBytes(content[4..], index);
        return Convert.ToBase64String(SHA256.HashData(content));
    }

    /// <summary>A database with <paramref name="rows"/> blocks (domain 1), built through the PInvoke provider.</summary>
    public static string Template(int rows)
    {
        lock (Templates)
        {
            if (Templates.TryGetValue(rows, out var path))
            {
                return path;
            }

            path = Path.Combine(Path.GetTempPath(), "blockdb-micro", $"template-{rows}-{Environment.ProcessId}.db");
            Directory.CreateDirectory(Path.GetDirectoryName(path)!);
            File.Delete(path);
            var options = new BlockDbOptions
            {
                Provider = "PInvoke",
                DataSource = path,
                Pragmas = new PragmaOptions { Preset = PragmaPreset.SqliteDefaults, Synchronous = SynchronousMode.Off, CacheSize = -262_144 },
                Batching = new BatchingOptions { CommitEvery = 0 },
            };
            using (var db = BlockDatabase.Open(options))
            using (var session = db.OpenSessionAsync().GetAwaiter().GetResult())
            {
                for (var i = 0; i < rows; i++)
                {
                    session.InsertBlockAsync(Hash(1, i), BlockSize).GetAwaiter().GetResult();
                }

                session.CommitAsync().GetAwaiter().GetResult();
            }

            Templates[rows] = path;
            return path;
        }
    }
}
