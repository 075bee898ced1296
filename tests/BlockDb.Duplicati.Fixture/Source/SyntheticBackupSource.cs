using System.Buffers.Binary;
using System.Globalization;
using System.Text;

namespace BlockDb.Duplicati.Fixture.Source;

/// <summary>What a source entry is.</summary>
public enum SourceEntryKind
{
    /// <summary>A folder: metadata only (<c>FileLookup.BlocksetID</c> −100).</summary>
    Folder,

    /// <summary>A regular file: metadata and content.</summary>
    File,

    /// <summary>A symbolic link stored as such: metadata only (<c>FileLookup.BlocksetID</c> −200).</summary>
    Symlink,
}

/// <summary>One path of a source version, as Duplicati's enumerator hands it over.</summary>
/// <param name="Path">The full path; a folder's ends with <c>/</c>.</param>
/// <param name="Kind">Folder, file or symbolic link.</param>
/// <param name="LastModifiedUtc">The last write time (Duplicati stores its ticks in <c>FilesetEntry.Lastmodified</c>).</param>
/// <param name="Metadata">The metadata blob Duplicati would build (UTF-8 JSON), real bytes.</param>
/// <param name="Content">A file's content; null for folders and symbolic links.</param>
public sealed record SourceEntry(string Path, SourceEntryKind Kind, DateTime LastModifiedUtc, byte[] Metadata, SourceContent? Content);

/// <summary>
/// A file's content, generated on demand: block <c>i</c> is <c>min(blocksize, Length − i·blocksize)</c> bytes, and the
/// bytes that stand for it are 13: a tag (0 unique, 1 from the common pool), a 64-bit content number and the size.
/// Hashing those bytes gives real hashes of real (if short) data; the file hash is the file-hash algorithm over all
/// of a file's block bytes in order, so a one-block file's FullHash equals its block hash when both algorithms are the
/// same, as in Duplicati. Since the size is part of the bytes, a hash never comes with two sizes.
/// </summary>
public sealed class SourceContent
{
    /// <summary>The bytes that stand for one block.</summary>
    public const int BlockBytesLength = 13;

    private readonly SyntheticBackupSource _source;
    private readonly (long Start, long Segment)[] _segments;

    internal SourceContent(SyntheticBackupSource source, long length, (long Start, long Segment)[] segments)
    {
        _source = source;
        Length = length;
        _segments = segments;
    }

    /// <summary>The content's length in bytes.</summary>
    public long Length { get; }

    /// <summary>The number of blocks: <c>ceil(Length / blocksize)</c> (0 for an empty file).</summary>
    public long BlockCount => (Length + _source.Blocksize - 1) / _source.Blocksize;

    internal (long Start, long Segment)[] Segments => _segments;

    /// <summary>The size of block <paramref name="index"/>: <c>blocksize</c> for every block but the last.</summary>
    /// <param name="index">0 to <see cref="BlockCount"/> − 1.</param>
    /// <returns>Bytes.</returns>
    public int BlockSize(long index) => (int)Math.Min(_source.Blocksize, Length - (index * _source.Blocksize));

    /// <summary>Writes the 13 bytes that stand for block <paramref name="index"/>.</summary>
    /// <param name="index">0 to <see cref="BlockCount"/> − 1.</param>
    /// <param name="destination">At least <see cref="BlockBytesLength"/> bytes.</param>
    public void WriteBlockBytes(long index, Span<byte> destination)
    {
        var size = BlockSize(index);
        var segment = _segments[0].Segment;
        foreach (var (start, id) in _segments)
        {
            if (start <= index)
            {
                segment = id;
            }
        }

        var common = size == _source.Blocksize && SyntheticBackupSource.Unit(_source.Mix(segment, index, 7)) < _source.Options.CommonBlockShare;
        destination[0] = common ? (byte)1 : (byte)0;
        var number = common ? (long)(_source.Mix(segment, index, 8) % (ulong)Math.Max(1, _source.Options.CommonBlockPool)) : (segment << 24) | index;
        BinaryPrimitives.WriteInt64LittleEndian(destination[1..], number);
        BinaryPrimitives.WriteInt32LittleEndian(destination[9..], size);
    }
}

/// <summary>
/// A deterministic synthetic backup source (issue 24's replay input): version 0 holds enough files for a wanted number
/// of data blocks; <see cref="Next"/> makes the next version (modified, touched, deleted, returned and new files).
/// Everything is a function of the seed, the file's number and the version, so two runs give the same file.
/// </summary>
public sealed class SyntheticBackupSource
{
    private const int MaxVersions = 1024;
    private readonly List<FileState> _files;

    private SyntheticBackupSource(SyntheticSourceOptions options, int blocksize, List<FileState> files, int baseFiles, int version)
    {
        Options = options;
        Blocksize = blocksize;
        _files = files;
        BaseFiles = baseFiles;
        Version = version;
    }

    /// <summary>The options.</summary>
    public SyntheticSourceOptions Options { get; }

    /// <summary>The block size the content is cut into (the Configuration's <c>blocksize</c>).</summary>
    public int Blocksize { get; }

    /// <summary>Files of version 0.</summary>
    public int BaseFiles { get; }

    /// <summary>This version's number (0 for the first backup).</summary>
    public int Version { get; }

    /// <summary>This version's backup time (UTC, whole seconds).</summary>
    public DateTime TimeUtc => Options.FirstBackupUtc + (Options.Interval * Version);

    /// <summary>Regular files present in this version.</summary>
    public int PresentFiles => _files.Count(f => f.Present && !f.Symlink);

    /// <summary>Data blocks of this version's present files (duplicates counted; blocklist blocks not).</summary>
    public long DataBlocks => _files.Where(f => f.Present && !f.Symlink).Sum(f => (f.Length + Blocksize - 1) / Blocksize);

    /// <summary>Version 0 with as many files as it takes to reach <paramref name="dataBlocks"/> data blocks.</summary>
    /// <param name="options">The shape.</param>
    /// <param name="blocksize">The block size in bytes (at least 1024).</param>
    /// <param name="dataBlocks">At least 1.</param>
    /// <returns>Version 0.</returns>
    public static SyntheticBackupSource WithBlocks(SyntheticSourceOptions options, int blocksize, long dataBlocks)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(dataBlocks, 1);
        var files = new List<FileState>();
        var source = new SyntheticBackupSource(Check(options, blocksize), blocksize, files, 0, 0);
        for (long blocks = 0; blocks < dataBlocks;)
        {
            var file = source.Create(files.Count, 0);
            files.Add(file);
            blocks += file.Symlink ? 0 : (file.Length + blocksize - 1) / blocksize;
        }

        return new SyntheticBackupSource(options, blocksize, files, files.Count, 0);
    }

    /// <summary>Version 0 with <paramref name="fileCount"/> entries (files and symbolic links).</summary>
    /// <param name="options">The shape.</param>
    /// <param name="blocksize">The block size in bytes (at least 1024).</param>
    /// <param name="fileCount">At least 1.</param>
    /// <returns>Version 0.</returns>
    public static SyntheticBackupSource WithFiles(SyntheticSourceOptions options, int blocksize, int fileCount)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(fileCount, 1);
        var files = new List<FileState>(fileCount);
        var source = new SyntheticBackupSource(Check(options, blocksize), blocksize, files, 0, 0);
        for (var i = 0; i < fileCount; i++)
        {
            files.Add(source.Create(i, 0));
        }

        return new SyntheticBackupSource(options, blocksize, files, fileCount, 0);
    }

    /// <summary>The next version: each present file is deleted, modified, touched or kept; each deleted file may come back as it was; new files are added.</summary>
    /// <returns>The next version (this one is unchanged).</returns>
    public SyntheticBackupSource Next()
    {
        var v = Version + 1;
        if (v >= MaxVersions)
        {
            throw new InvalidOperationException($"The synthetic source makes at most {MaxVersions} versions.");
        }

        var o = Options;
        var time = TimeUtc + o.Interval;
        var files = new List<FileState>(_files.Count + (int)(o.NewShare * BaseFiles) + 1);
        for (var i = 0; i < _files.Count; i++)
        {
            var f = _files[i];
            var d = Unit(Mix(i, v, 1));
            if (!f.Present)
            {
                f.Present = d < o.ResurrectShare;
            }
            else if (d < o.DeleteShare)
            {
                f.Present = false;
            }
            else if (f.Symlink)
            {
                // Links are kept as they are.
            }
            else if (d < o.DeleteShare + o.ModifyShare)
            {
                var fullBlocks = f.Length / Blocksize;
                var keep = (long)(Unit(Mix(i, v, 2)) * fullBlocks);
                var tail = Math.Max(1, Math.Min(FileSize(i, v) - 1, o.MaxFileBytes - (keep * Blocksize)));
                f.Length = (keep * Blocksize) + tail;
                f.Segments = [.. f.Segments.Where(s => s.Start < keep), (keep, SegmentId(i, v))];
                f.LastModifiedTicks = Recent(i, v, time);
            }
            else if (d < o.DeleteShare + o.ModifyShare + o.TouchShare)
            {
                f.LastModifiedTicks = Recent(i, v, time);
            }

            files.Add(f);
        }

        var added = (int)Math.Round(o.NewShare * BaseFiles);
        for (var j = 0; j < added; j++)
        {
            files.Add(Create(files.Count, v));
        }

        return new SyntheticBackupSource(o, Blocksize, files, BaseFiles, v);
    }

    /// <summary>The entries of this version in enumeration order: the root folder, then per folder the folder and its present files.</summary>
    /// <returns>The entries, generated as they are enumerated.</returns>
    public IEnumerable<SourceEntry> Entries()
    {
        var o = Options;
        yield return new SourceEntry(o.Root, SourceEntryKind.Folder, FolderTime(-1), FolderMetadata(FolderTime(-1)), null);
        var perFolder = Math.Max(1, o.FilesPerFolder);
        for (var folder = 0; folder * perFolder < _files.Count; folder++)
        {
            var folderPath = o.Root + "d" + folder.ToString("D6", CultureInfo.InvariantCulture) + "/";
            yield return new SourceEntry(folderPath, SourceEntryKind.Folder, FolderTime(folder), FolderMetadata(FolderTime(folder)), null);
            for (var i = folder * perFolder; i < Math.Min(_files.Count, (folder + 1) * perFolder); i++)
            {
                var f = _files[i];
                if (!f.Present)
                {
                    continue;
                }

                var time = new DateTime(f.LastModifiedTicks, DateTimeKind.Utc);
                var number = i.ToString("D8", CultureInfo.InvariantCulture);
                yield return f.Symlink
                    ? new SourceEntry(folderPath + "link-" + number, SourceEntryKind.Symlink, time, Metadata("Normal", time, f.CreatedTicks, "../target-" + number), null)
                    : new SourceEntry(folderPath + "file-" + number + ".dat", SourceEntryKind.File, time, Metadata("Normal", time, f.CreatedTicks, null), new SourceContent(this, f.Length, f.Segments));
            }
        }
    }

    /// <summary>A 64-bit mix of the seed and three numbers (SplitMix64's finalizer over each).</summary>
    internal ulong Mix(long a, long b, long c)
    {
        var x = (ulong)Options.Seed * 0x9E3779B97F4A7C15UL;
        foreach (var v in (ReadOnlySpan<long>)[a, b, c])
        {
            x += ((ulong)v + 0x9E3779B97F4A7C15UL) * 0xBF58476D1CE4E5B9UL;
            x ^= x >> 31;
            x *= 0x94D049BB133111EBUL;
            x ^= x >> 29;
        }

        return x;
    }

    /// <summary>A uniform number in [0, 1) from 53 bits of a mix.</summary>
    internal static double Unit(ulong mix) => (mix >> 11) * (1.0 / (1UL << 53));

    private static SyntheticSourceOptions Check(SyntheticSourceOptions options, int blocksize)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThan(blocksize, DuplicatiConstants.MinimumBlocksize);
        ArgumentOutOfRangeException.ThrowIfLessThan(options.FilesPerFolder, 1);
        return options;
    }

    private static long SegmentId(long file, int version) => ((file + 1) * MaxVersions) + version;

    private FileState Create(int i, int version)
    {
        var o = Options;
        var born = o.FirstBackupUtc + (o.Interval * version);
        var created = born.Ticks - (long)(Unit(Mix(i, version, 3)) * (version == 0 ? TimeSpan.FromDays(365) : o.Interval).Ticks);
        var state = new FileState { Present = true, CreatedTicks = created, LastModifiedTicks = created };
        if (Unit(Mix(i, version, 4)) < o.SymlinkShare)
        {
            state.Symlink = true;
            state.Segments = [];
            return state;
        }

        if (i > 0 && Unit(Mix(i, version, 5)) < o.DuplicateFileShare)
        {
            var original = Create((int)(Mix(i, version, 6) % (ulong)i), 0);
            if (!original.Symlink)
            {
                state.Length = original.Length;
                state.Segments = original.Segments;
                return state;
            }
        }

        state.Length = Unit(Mix(i, version, 9)) < o.EmptyFileShare ? 0 : FileSize(i, version);
        state.Segments = [(0, SegmentId(i, version))];
        return state;
    }

    /// <summary>A log-normal size (Box–Muller over two mixes), 1 byte to <see cref="SyntheticSourceOptions.MaxFileBytes"/>.</summary>
    private long FileSize(long i, int version)
    {
        var u1 = Math.Max(Unit(Mix(i, version, 10)), 1e-300);
        var u2 = Unit(Mix(i, version, 11));
        var normal = Math.Sqrt(-2 * Math.Log(u1)) * Math.Cos(2 * Math.PI * u2);
        var bytes = Math.Exp(Math.Log(Options.MedianFileBytes) + (Options.Sigma * normal));
        return (long)Math.Clamp(Math.Ceiling(bytes), 1, Options.MaxFileBytes);
    }

    private long Recent(long i, int version, DateTime time) => time.Ticks - (long)(Unit(Mix(i, version, 12)) * Options.Interval.Ticks / 2);

    private DateTime FolderTime(int folder) => new(Options.FirstBackupUtc.Ticks - (long)(Unit(Mix(folder, -1, 13)) * TimeSpan.FromDays(365).Ticks), DateTimeKind.Utc);

    private static byte[] FolderMetadata(DateTime time) => Metadata("Directory", time, time.Ticks, null);

    /// <summary>A metadata blob shaped like Duplicati's (<c>MetadataGenerator</c>): attributes, times, Unix owner and permissions, a link's target.</summary>
    private static byte[] Metadata(string attributes, DateTime lastWrite, long createdTicks, string? symlinkTarget)
    {
        var text = new StringBuilder(160)
            .Append(CultureInfo.InvariantCulture, $"{{\"CoreAttributes\":\"{attributes}\",\"CoreLastWritetime\":\"{lastWrite.Ticks}\",\"CoreCreatetime\":\"{createdTicks}\",\"unix:uid-gid-perm\":\"1000-1000-{(attributes == "Directory" ? 493 : 420)}\"");
        if (symlinkTarget is not null)
        {
            text.Append(CultureInfo.InvariantCulture, $",\"CoreSymlinkTarget\":\"{symlinkTarget}\"");
        }

        return Encoding.UTF8.GetBytes(text.Append('}').ToString());
    }

    private struct FileState
    {
        public bool Present;
        public bool Symlink;
        public long CreatedTicks;
        public long LastModifiedTicks;
        public long Length;
        public (long Start, long Segment)[] Segments;
    }
}
