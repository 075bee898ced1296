using System.Buffers.Binary;
using BlockDb.Bench.Data;

namespace BlockDb.Bench.Recreate;

/// <summary>
/// A Duplicati-like stream to rebuild an index from (what Duplicati's recreate reads): the volume index files (each
/// block's hash, size and volume, <see cref="BlocksPerVolume"/> new blocks to a volume) and the file lists (each file's
/// full hash, length and blocks in order). Deterministic from its seed: file sizes from the harness's
/// <see cref="FileSizeModel"/> (log-normal, 100 KiB blocks), hashes from <see cref="BlockHashes"/>; each block of a file
/// repeats a uniformly chosen earlier block with probability <see cref="RepeatShare"/> (a real backup's repeated
/// blocks), else is a new one. Written to one file that both the .NET side and the C loop
/// (<c>blockdb_native.c --workload recreate</c>) read whole before timing.
/// </summary>
/// <remarks>
/// File format (little-endian): <c>BDBRCR01</c>; int64 blocks, files, entries, blocks per volume; per block its 32-byte
/// hash, int64 size and int64 volume ID (volume <c>i / BlocksPerVolume + 1</c>: the template registers them 1..n); per
/// file its 32-byte full hash, int64 length, int32 block count and that many int32 indexes of blocks (a file list names
/// its blocks by hash; the index saves the file the repeated 32 bytes, and each side resolves it to the hash and size
/// before timing, then to an ID by hash inside the timed region).
/// </remarks>
internal sealed class RecreateStream
{
    /// <summary>New blocks per volume: a 50 MB volume of 100 KiB blocks (Duplicati's defaults).</summary>
    public const int BlocksPerVolume = 500;

    /// <summary>The share of a file's blocks that repeat an earlier block.</summary>
    public const double RepeatShare = 0.2;

    private const string Magic = "BDBRCR01";

    private RecreateStream(byte[] hashes, long[] sizes, byte[] fullHashes, long[] lengths, int[] starts, int[] refs)
    {
        (Hashes, Sizes, FullHashes, Lengths, Starts, Refs) = (hashes, sizes, fullHashes, lengths, starts, refs);
    }

    /// <summary>The blocks' hashes, 32 bytes each, in stream order (block i gets ID i + 1 on an empty KeyMap file).</summary>
    public byte[] Hashes { get; }

    /// <summary>The blocks' sizes.</summary>
    public long[] Sizes { get; }

    /// <summary>The files' full hashes, 32 bytes each.</summary>
    public byte[] FullHashes { get; }

    /// <summary>The files' lengths (the sum of their blocks' sizes).</summary>
    public long[] Lengths { get; }

    /// <summary>File f's blocks are <c>Refs[Starts[f]..Starts[f + 1]]</c>.</summary>
    public int[] Starts { get; }

    /// <summary>The files' blocks, as indexes into the blocks.</summary>
    public int[] Refs { get; }

    public int Blocks => Sizes.Length;

    public int Files => Lengths.Length;

    public int Volumes => (Blocks + BlocksPerVolume - 1) / BlocksPerVolume;

    /// <summary>Block <paramref name="i"/>'s volume ID.</summary>
    public static long VolumeOf(int i) => (i / BlocksPerVolume) + 1;

    /// <summary>The path of the stream of <paramref name="blocks"/> new blocks and <paramref name="seed"/> in a folder, written once.</summary>
    public static string Ensure(string folder, int blocks, int seed)
    {
        Directory.CreateDirectory(folder);
        var path = Path.Combine(folder, $"recreate-{blocks}-{seed}.bin");
        if (!File.Exists(path))
        {
            Generate(blocks, seed).Write(path + ".part");
            File.Move(path + ".part", path, overwrite: true);
        }

        return path;
    }

    /// <summary>Generates the stream: files until <paramref name="blocks"/> new blocks have been written.</summary>
    public static RecreateStream Generate(int blocks, int seed)
    {
        var rng = new Random(seed);
        var hashes = new byte[(long)blocks * 32];
        var sizes = new long[blocks];
        var fullHashes = new List<byte[]>();
        var lengths = new List<long>();
        var starts = new List<int> { 0 };
        var refs = new List<int>(blocks + (blocks / 3));
        var made = 0;
        while (made < blocks)
        {
            var fileBytes = FileSizeModel.NextFileSize(rng);
            var count = FileSizeModel.BlockCount(fileBytes);
            long length = 0;
            for (var i = 0; i < count; i++)
            {
                int block;
                if (made > 0 && rng.NextDouble() < RepeatShare)
                {
                    block = rng.Next(made);
                }
                else if (made < blocks)
                {
                    block = made++;
                    BlockHashes.Binary(seed, HashDomain.Stream, block).Bytes.CopyTo(hashes.AsSpan(block * 32, 32));
                    sizes[block] = FileSizeModel.BlockBytes(fileBytes, i);
                }
                else
                {
                    break;
                }

                refs.Add(block);
                length += sizes[block];
            }

            fullHashes.Add(BlockHashes.Binary(seed, HashDomain.FullHash, lengths.Count).Bytes.ToArray());
            lengths.Add(length);
            starts.Add(refs.Count);
        }

        return new RecreateStream(hashes, sizes, [.. fullHashes.SelectMany(h => h)], [.. lengths], [.. starts], [.. refs]);
    }

    /// <summary>Reads a stream file.</summary>
    /// <exception cref="InvalidDataException">Not a stream file, or truncated.</exception>
    public static RecreateStream Read(string path)
    {
        using var reader = new BinaryReader(File.OpenRead(path));
        if (new string(reader.ReadChars(Magic.Length)) != Magic)
        {
            throw new InvalidDataException($"{path} is not a recreate stream.");
        }

        var (blocks, files, entries) = (checked((int)reader.ReadInt64()), checked((int)reader.ReadInt64()), checked((int)reader.ReadInt64()));
        if (reader.ReadInt64() != BlocksPerVolume)
        {
            throw new InvalidDataException($"{path} has another volume size than {BlocksPerVolume} blocks.");
        }

        var hashes = new byte[(long)blocks * 32];
        var sizes = new long[blocks];
        for (var i = 0; i < blocks; i++)
        {
            reader.Read(hashes.AsSpan(i * 32, 32));
            sizes[i] = reader.ReadInt64();
            _ = reader.ReadInt64(); // the volume: VolumeOf(i)
        }

        var fullHashes = new byte[(long)files * 32];
        var lengths = new long[files];
        var starts = new int[files + 1];
        var refs = new int[entries];
        for (var f = 0; f < files; f++)
        {
            reader.Read(fullHashes.AsSpan(f * 32, 32));
            lengths[f] = reader.ReadInt64();
            var count = reader.ReadInt32();
            starts[f + 1] = starts[f] + count;
            for (var i = starts[f]; i < starts[f + 1]; i++)
            {
                refs[i] = reader.ReadInt32();
            }
        }

        return new RecreateStream(hashes, sizes, fullHashes, lengths, starts, refs);
    }

    private void Write(string path)
    {
        using var writer = new BinaryWriter(new BufferedStream(File.Create(path), 1 << 20));
        writer.Write(Magic.ToCharArray());
        writer.Write((long)Blocks);
        writer.Write((long)Files);
        writer.Write((long)Refs.Length);
        writer.Write((long)BlocksPerVolume);
        for (var i = 0; i < Blocks; i++)
        {
            writer.Write(Hashes.AsSpan(i * 32, 32));
            writer.Write(Sizes[i]);
            writer.Write(VolumeOf(i));
        }

        Span<byte> word = stackalloc byte[4];
        for (var f = 0; f < Files; f++)
        {
            writer.Write(FullHashes.AsSpan(f * 32, 32));
            writer.Write(Lengths[f]);
            writer.Write(Starts[f + 1] - Starts[f]);
            for (var i = Starts[f]; i < Starts[f + 1]; i++)
            {
                BinaryPrimitives.WriteInt32LittleEndian(word, Refs[i]);
                writer.Write(word);
            }
        }
    }
}
