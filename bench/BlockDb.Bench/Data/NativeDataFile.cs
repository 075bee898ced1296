using System.Text;

namespace BlockDb.Bench.Data;

/// <summary>
/// Writes <see cref="WorkloadData"/> for the C baseline (read by <c>bench/native/blockdb_native.c</c>,
/// which reads the whole file before any timing). Little-endian: magic <c>BDBNDAT1</c>, then the warm-up and
/// the timed section, each: int64 items, int64 groups, int64 ids; per item int64 size, int32 hash length,
/// hash bytes (ASCII); when groups &gt; 0, int64 group starts (groups + 1) and per group int32 full-hash
/// length (−1 = NULL) and its bytes; then the int64 blockset IDs.
/// </summary>
public static class NativeDataFile
{
    /// <summary>The file magic.</summary>
    public const string Magic = "BDBNDAT1";

    /// <summary>Writes the file (to a temporary name first, so a cached file is always complete).</summary>
    /// <param name="path">The destination.</param>
    /// <param name="data">The data.</param>
    public static void Write(string path, WorkloadData data)
    {
        var temp = path + ".tmp";
        using (var stream = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None, 1 << 16))
        using (var w = new BinaryWriter(stream, Encoding.ASCII))
        {
            w.Write(Encoding.ASCII.GetBytes(Magic));
            WriteSection(w, data.Warmup);
            WriteSection(w, data.Timed);
        }

        File.Move(temp, path, overwrite: true);
    }

    private static void WriteSection(BinaryWriter w, BlockStream s)
    {
        var groups = s.GroupStarts is { } g ? g.Length - 1 : 0;
        var ids = s.BlocksetIds ?? [];
        w.Write((long)s.Hashes.Length);
        w.Write((long)groups);
        w.Write((long)ids.Length);
        for (var i = 0; i < s.Hashes.Length; i++)
        {
            w.Write(s.Sizes[i]);
            WriteText(w, s.Hashes[i]);
        }

        if (groups > 0)
        {
            foreach (var start in s.GroupStarts!)
            {
                w.Write((long)start);
            }

            foreach (var fullHash in s.GroupFullHashes!)
            {
                WriteText(w, fullHash);
            }
        }

        foreach (var id in ids)
        {
            w.Write(id);
        }
    }

    private static void WriteText(BinaryWriter w, string? text)
    {
        if (text is null)
        {
            w.Write(-1);
            return;
        }

        var bytes = Encoding.UTF8.GetBytes(text);
        w.Write(bytes.Length);
        w.Write(bytes);
    }
}
