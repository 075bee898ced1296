namespace BlockDb.Bench.Data;

/// <summary>
/// The content of a pre-filled database: <see cref="Blocks"/> distinct blocks (IDs 1..N in order) grouped
/// into files, one blockset per file (IDs 1..F) covering consecutive blocks, so BlocksetEntry has N rows.
/// Hashes are recomputed on demand; only the sizes and file boundaries are kept (4 bytes per block).
/// </summary>
public sealed class PrefillPlan
{
    private PrefillPlan(int seed, int[] sizes, int[] fileStarts)
    {
        Seed = seed;
        Sizes = sizes;
        FileStarts = fileStarts;
    }

    /// <summary>The data seed.</summary>
    public int Seed { get; }

    /// <summary>Block sizes; block i has ID i + 1.</summary>
    public int[] Sizes { get; }

    /// <summary>First block of each file, plus the end (length = blocksets + 1).</summary>
    public int[] FileStarts { get; }

    /// <summary>Blocks in the database.</summary>
    public int Blocks => Sizes.Length;

    /// <summary>Blocksets in the database.</summary>
    public int Blocksets => FileStarts.Length - 1;

    /// <summary>The share of blocks that are full size.</summary>
    public double FullBlockShare => Sizes.Length == 0 ? 0 : Sizes.Count(s => s == FileSizeModel.BlockSize) / (double)Sizes.Length;

    /// <summary>Builds the plan for a size and seed (deterministic).</summary>
    /// <param name="blocks">Blocks to pre-fill.</param>
    /// <param name="seed">The data seed.</param>
    /// <returns>The plan.</returns>
    public static PrefillPlan Create(int blocks, int seed)
    {
        // System.Random with a seed is deterministic across runs and platforms.
        var rng = new Random(unchecked((seed * 31) + 7));
        var sizes = new int[blocks];
        var starts = new List<int>();
        var i = 0;
        while (i < blocks)
        {
            starts.Add(i);
            var file = FileSizeModel.NextFileSize(rng);
            var count = FileSizeModel.BlockCount(file);
            for (var j = 0; j < count && i < blocks; j++, i++)
            {
                sizes[i] = FileSizeModel.BlockBytes(file, j);
            }
        }

        starts.Add(blocks);
        return new PrefillPlan(seed, sizes, [.. starts]);
    }

    /// <summary>The hash of block <paramref name="index"/> (ID index + 1).</summary>
    /// <param name="index">The 0-based block index.</param>
    /// <returns>The base64 SHA-256.</returns>
    public string Hash(int index) => BlockHashes.Of(Seed, HashDomain.Prefill, index);

    /// <summary>The whole-file hash of blockset <paramref name="file"/> (ID file + 1).</summary>
    /// <param name="file">The 0-based file index.</param>
    /// <returns>The base64 SHA-256.</returns>
    public string FullHash(int file) => BlockHashes.Of(Seed, HashDomain.FullHash, file);

    /// <summary>The block of index <paramref name="index"/> (ID index + 1) as the bulk import takes it.</summary>
    /// <param name="index">The 0-based block index.</param>
    /// <returns>The 32-byte hash and the size.</returns>
    public BlockKey BinaryBlock(int index) => new(BlockHashes.Binary(Seed, HashDomain.Prefill, index), Sizes[index]);

    /// <summary>The whole-file hash of blockset <paramref name="file"/> (ID file + 1), as its 32 bytes.</summary>
    /// <param name="file">The 0-based file index.</param>
    /// <returns>The SHA-256 whose base64 is <see cref="FullHash"/>.</returns>
    public BlockHash BinaryFullHash(int file) => BlockHashes.Binary(Seed, HashDomain.FullHash, file);
}
