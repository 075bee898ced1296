using MathNet.Numerics.Distributions;

namespace BlockDb.Bench.Data;

/// <summary>
/// The block size distribution: files are split into 100 KiB blocks (Duplicati's default block size), so
/// every block is full size except each file's last, which holds the remainder. File sizes are log-normal
/// with a median of 32 KiB and σ = 2.5 (natural log), capped at 64 MiB: many small files (one short
/// block each) and a long tail of large files that contribute most of the (full-size) blocks.
/// </summary>
public static class FileSizeModel
{
    /// <summary>The block size: 102,400 bytes.</summary>
    public const int BlockSize = 102_400;

    /// <summary>The median file size in bytes.</summary>
    public const double MedianFileBytes = 32_768;

    /// <summary>σ of ln(file size).</summary>
    public const double Sigma = 2.5;

    /// <summary>The largest file: 64 MiB (656 blocks).</summary>
    public const long MaxFileBytes = 64L << 20;

    /// <summary>One-line description for reports.</summary>
    public const string Description =
        "file sizes log-normal (median 32 KiB, sigma 2.5 in ln, capped at 64 MiB) split into 102400-byte blocks; each file's last block holds the remainder";

    /// <summary>Draws a file size.</summary>
    /// <param name="rng">The seeded generator.</param>
    /// <returns>Bytes, 1 to <see cref="MaxFileBytes"/>.</returns>
    public static long NextFileSize(Random rng)
    {
        var bytes = LogNormal.Sample(rng, Math.Log(MedianFileBytes), Sigma);
        return Math.Clamp((long)Math.Ceiling(bytes), 1, MaxFileBytes);
    }

    /// <summary>The number of blocks of a file.</summary>
    /// <param name="fileBytes">The file size.</param>
    /// <returns>At least 1.</returns>
    public static int BlockCount(long fileBytes) => (int)((fileBytes + BlockSize - 1) / BlockSize);

    /// <summary>The size of block <paramref name="index"/> of a file.</summary>
    /// <param name="fileBytes">The file size.</param>
    /// <param name="index">The 0-based block index.</param>
    /// <returns>Bytes.</returns>
    public static int BlockBytes(long fileBytes, int index)
    {
        var count = BlockCount(fileBytes);
        return index < count - 1 ? BlockSize : (int)(fileBytes - ((long)(count - 1) * BlockSize));
    }
}
