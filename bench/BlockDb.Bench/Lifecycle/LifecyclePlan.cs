using BlockDb.Bench.Data;

namespace BlockDb.Bench.Lifecycle;

/// <summary>
/// The content of a lifecycle template, deterministic from its seed: files of 1 to 4 blocks each (2.5 on average),
/// one blockset per file (IDs 1..F in order); each entry is a new block (IDs 1..N in order, recorded in volumes of
/// <see cref="BlocksPerVolume"/> consecutive blocks) or, with probability <see cref="ShareProbability"/>, a block of an
/// earlier file among the last <see cref="ShareWindow"/> blocks (files written near each other share content).
/// Hashes are recomputed on demand; the plan keeps sizes, entries and file boundaries (4 bytes each).
/// Also the oracle of the delete-and-collect run: which blocksets it deletes (evenly spread) and which blocks,
/// bytes and volumes the collection must then delete.
/// </summary>
internal sealed class LifecyclePlan
{
    /// <summary>The block size of full blocks: 102,400 bytes (Duplicati's default), as the sweep's templates.</summary>
    public const int BlockSize = FileSizeModel.BlockSize;

    /// <summary>Blocks per volume (about 100 MiB of 100 KiB blocks; Duplicati's default dblock size is 50 MiB).</summary>
    public const int BlocksPerVolume = 1000;

    /// <summary>The probability that an entry names a block of an earlier file.</summary>
    public const double ShareProbability = 0.2;

    /// <summary>How far back a shared block is drawn from (in blocks).</summary>
    public const int ShareWindow = 100_000;

    /// <summary>The generator's version, in the template's file name: bump when the data changes.</summary>
    public const int Version = 1;

    /// <summary>One-line description for reports.</summary>
    public const string Description =
        "files of 1-4 blocks (uniform, 2.5 on average), one blockset per file; each entry a new block (102,400 bytes, the file's last new block 1-102,400) or with p = 0.2 a block of an earlier file among the last 100,000 blocks; 1,000 consecutive blocks per volume (all Uploaded)";

    private LifecyclePlan(int seed, int[] sizes, int[] entries, int[] fileStarts, double deleteShare)
    {
        Seed = seed;
        Sizes = sizes;
        Entries = entries;
        FileStarts = fileStarts;
        DeleteShare = deleteShare;
        DeletedFiles = [.. Enumerable.Range(0, Blocksets).Where(IsDeleted)];
        var refs = new int[sizes.Length];
        foreach (var block in entries)
        {
            refs[block]++;
        }

        long deletedEntries = 0;
        foreach (var f in DeletedFiles)
        {
            for (var e = fileStarts[f]; e < fileStarts[f + 1]; e++)
            {
                refs[entries[e]]--;
                deletedEntries++;
            }
        }

        DeletedEntries = deletedEntries;
        var collected = new List<int>();
        var byVolume = new SortedDictionary<long, (long Blocks, long Bytes)>();
        for (var b = 0; b < refs.Length; b++)
        {
            if (refs[b] == 0)
            {
                collected.Add(b);
                var volume = VolumeOf(b);
                var (blocks, bytes) = byVolume.GetValueOrDefault(volume);
                byVolume[volume] = (blocks + 1, bytes + sizes[b]);
            }
        }

        CollectedBlocks = [.. collected];
        CollectedBytes = collected.Sum(b => (long)sizes[b]);
        CollectedByVolume = byVolume;
    }

    /// <summary>The data seed.</summary>
    public int Seed { get; }

    /// <summary>Block sizes; block i has ID i + 1.</summary>
    public int[] Sizes { get; }

    /// <summary>Every blockset entry's block index, file after file, in order.</summary>
    public int[] Entries { get; }

    /// <summary>First entry of each file, plus the end (length = blocksets + 1).</summary>
    public int[] FileStarts { get; }

    /// <summary>The share of blocksets the run deletes.</summary>
    public double DeleteShare { get; }

    /// <summary>Blocks in the template.</summary>
    public int Blocks => Sizes.Length;

    /// <summary>Blocksets in the template (file i has ID i + 1).</summary>
    public int Blocksets => FileStarts.Length - 1;

    /// <summary>Volumes in the template (volume v has ID v + 1).</summary>
    public int Volumes => (Sizes.Length + BlocksPerVolume - 1) / BlocksPerVolume;

    /// <summary>The files the run deletes, 0-based, in order: floor(F × share) of them, evenly spread.</summary>
    public int[] DeletedFiles { get; }

    /// <summary>The entries those files hold.</summary>
    public long DeletedEntries { get; }

    /// <summary>The blocks no remaining blockset names once <see cref="DeletedFiles"/> are deleted, 0-based, in order.</summary>
    public int[] CollectedBlocks { get; }

    /// <summary>Their bytes.</summary>
    public long CollectedBytes { get; }

    /// <summary>The collected blocks and bytes per volume ID.</summary>
    public IReadOnlyDictionary<long, (long Blocks, long Bytes)> CollectedByVolume { get; }

    /// <summary>Builds a plan: <paramref name="files"/> files, or files until <paramref name="maxBlocks"/> blocks exist (the last file then ends with shared blocks), whichever comes first.</summary>
    /// <param name="files">Files (blocksets) to generate; 0: no limit.</param>
    /// <param name="maxBlocks">Blocks to stop at; 0: no limit.</param>
    /// <param name="seed">The data seed.</param>
    /// <param name="deleteShare">The share of blocksets the delete run removes.</param>
    /// <returns>The plan.</returns>
    public static LifecyclePlan Create(int files, int maxBlocks, int seed, double deleteShare)
    {
        if (files <= 0 && maxBlocks <= 0)
        {
            throw new ArgumentException("A lifecycle plan needs a file count or a block count.");
        }

        var rng = new Random(unchecked((seed * 131) + 17));
        var sizes = new List<int>();
        var entries = new List<int>();
        var starts = new List<int>();
        for (var f = 0; files <= 0 || f < files; f++)
        {
            if (maxBlocks > 0 && sizes.Count >= maxBlocks)
            {
                break;
            }

            starts.Add(entries.Count);
            var count = 1 + rng.Next(4);
            var lastNew = -1;
            for (var j = 0; j < count; j++)
            {
                var full = maxBlocks > 0 && sizes.Count >= maxBlocks;
                if (sizes.Count > 0 && (full || rng.NextDouble() < ShareProbability))
                {
                    var window = Math.Min(ShareWindow, sizes.Count);
                    entries.Add(sizes.Count - 1 - rng.Next(window));
                }
                else
                {
                    lastNew = sizes.Count;
                    entries.Add(sizes.Count);
                    sizes.Add(BlockSize);
                }
            }

            if (lastNew >= 0)
            {
                sizes[lastNew] = 1 + rng.Next(BlockSize);
            }
        }

        starts.Add(entries.Count);
        return new LifecyclePlan(seed, [.. sizes], [.. entries], [.. starts], deleteShare);
    }

    /// <summary>The volume ID of block <paramref name="block"/> (0-based).</summary>
    public static long VolumeOf(int block) => (block / BlocksPerVolume) + 1;

    /// <summary>The name of volume <paramref name="volumeId"/>, Duplicati-style.</summary>
    public static string VolumeName(long volumeId) => $"duplicati-b{volumeId:D7}.dblock.zip";

    /// <summary>Whether the delete run deletes file <paramref name="file"/>: floor((f + 1) × share) &gt; floor(f × share), evenly spread.</summary>
    public bool IsDeleted(int file) => Math.Floor((file + 1) * DeleteShare) > Math.Floor(file * DeleteShare);

    /// <summary>The length in bytes of file <paramref name="file"/>'s blockset.</summary>
    public long Length(int file)
    {
        long length = 0;
        for (var e = FileStarts[file]; e < FileStarts[file + 1]; e++)
        {
            length += Sizes[Entries[e]];
        }

        return length;
    }

    /// <summary>The hash of block <paramref name="index"/> (ID index + 1). The seed is offset so these never equal the sweep's hashes.</summary>
    public string Hash(int index) => BlockHashes.Of(Seed ^ 0x4C494645, HashDomain.Prefill, index);

    /// <summary>The whole-file hash of blockset <paramref name="file"/> (ID file + 1).</summary>
    public string FullHash(int file) => BlockHashes.Of(Seed ^ 0x4C494645, HashDomain.FullHash, file);
}
