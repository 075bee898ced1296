using System.Security.Cryptography;

namespace BlockDb.Bench.Micro;

/// <summary>Real SHA-256 hashes (44-character base64) and a pre-filled template database, built once per process.</summary>
internal static class MicroData
{
    public const long BlockSize = 102_400;

    private static readonly Dictionary<(int Rows, BlockLayout Layout), string> Templates = [];

    public static string Hash(int domain, int index) => Bytes(domain, index).ToString();

    /// <summary>The same hash as <see cref="Hash"/>, as bytes.</summary>
    public static BlockHash Bytes(int domain, int index)
    {
        Span<byte> content = stackalloc byte[8];
        BitConverter.TryWriteBytes(content, domain);
        BitConverter.TryWriteBytes(content[4..], index);
        return new BlockHash(SHA256.HashData(content));
    }

    /// <summary>A database of <paramref name="layout"/> with <paramref name="rows"/> blocks (domain 1), built through the PInvoke provider.</summary>
    public static string Template(int rows, BlockLayout layout)
    {
        lock (Templates)
        {
            if (Templates.TryGetValue((rows, layout), out var path))
            {
                return path;
            }

            path = Path.Combine(Path.GetTempPath(), "blockdb-micro", $"template-{layout}-{rows}-{Environment.ProcessId}.db");
            Directory.CreateDirectory(Path.GetDirectoryName(path)!);
            File.Delete(path);
            var options = new BlockDbOptions
            {
                Provider = "PInvoke",
                DataSource = path,
                Pragmas = new PragmaOptions { Preset = PragmaPreset.SqliteDefaults, Synchronous = SynchronousMode.Off, CacheSize = -262_144 },
                Batching = new BatchingOptions { CommitEvery = 0 },
                Index = new IndexOptions { Layout = layout },
            };
            using (var db = BlockDatabase.Open(options))
            using (var session = db.OpenSessionAsync().GetAwaiter().GetResult())
            {
                for (var i = 0; i < rows; i++)
                {
                    session.SelectXorInsertAsync(BlockKey.Parse(Hash(1, i), BlockSize)).GetAwaiter().GetResult();
                }

                session.CommitAsync().GetAwaiter().GetResult();
            }

            Templates[(rows, layout)] = path;
            return path;
        }
    }
}
