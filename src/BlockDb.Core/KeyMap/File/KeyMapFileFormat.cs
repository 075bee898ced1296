using System.Globalization;
using System.IO.Hashing;
using System.Runtime.InteropServices;
using BlockDb.Drivers;

namespace BlockDb.KeyMap;

/// <summary>
/// The key-map snapshot's file: <see cref="KeyMapFileHeader"/>, the table's slots as they are in memory
/// (little-endian 8-byte slots, empty ones included, so loading is one sequential read into the array), and an XXH128
/// of all of it. Written to a temporary file in the same folder and renamed over the old one, so a reader sees a whole
/// old file or a whole new one; a torn or damaged file fails its checksum and is never used.
/// </summary>
internal static class KeyMapFileFormat
{
    /// <summary>Slots per read or write: 1 MiB (a byte span of the whole table could pass <see cref="int.MaxValue"/>).</summary>
    private const int ChunkSlots = 1 << 17;

    /// <summary>The snapshot file of the database at <paramref name="databasePath"/>: <c>&lt;database&gt;-blockdb-keymap</c>.</summary>
    public static string PathOf(string databasePath) => databasePath + "-blockdb-keymap";

    /// <summary>
    /// Writes the snapshot to a new temporary file beside <paramref name="path"/> and returns its name (the caller renames it).
    /// On Unix the file is created with the permissions of <paramref name="databasePath"/> (as SQLite creates its journal
    /// and WAL): it holds the file's secret key seed, so it must be no easier to read than the database.
    /// </summary>
    /// <exception cref="IOException">The file could not be written (it is deleted).</exception>
    public static string WriteTemporary(string path, string databasePath, KeyMapFileHeader header, ulong[] slots)
    {
        var temporary = string.Create(CultureInfo.InvariantCulture, $"{path}.{Environment.ProcessId}.{Guid.NewGuid():N}.tmp");
        var options = new FileStreamOptions
        {
            Mode = FileMode.CreateNew,
            Access = FileAccess.Write,
            Share = FileShare.None,
            BufferSize = 0,
            PreallocationSize = header.FileLength,
        };
        if (!OperatingSystem.IsWindows())
        {
            // Only the read and write bits: never execute, set-ID or sticky bits on a data file.
            const UnixFileMode readWrite = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.GroupWrite | UnixFileMode.OtherRead | UnixFileMode.OtherWrite;
            options.UnixCreateMode = File.Exists(databasePath) ? File.GetUnixFileMode(databasePath) & readWrite : UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }

        try
        {
            using var stream = new FileStream(temporary, options);
            var checksum = new XxHash128();
            Span<byte> head = stackalloc byte[KeyMapFileHeader.Bytes];
            header.Write(head);
            checksum.Append(head);
            stream.Write(head);
            EachChunk(slots, chunk =>
            {
                checksum.Append(chunk);
                stream.Write(chunk);
            });

            Span<byte> sum = stackalloc byte[KeyMapFileHeader.ChecksumBytes];
            checksum.GetCurrentHash(sum);
            stream.Write(sum);
            return temporary;
        }
        catch
        {
            File.Delete(temporary);
            throw;
        }
    }

    /// <summary>
    /// Why the entry at <paramref name="path"/> must not be replaced by a snapshot, or null when it may be: none is
    /// there, or an empty file, or a regular file that starts with a snapshot's magic number (or a folder, which the
    /// rename then fails to replace). Anything else is kept: another database named after this one's snapshot, and a
    /// FIFO, socket, device or symbolic link, which is never opened (opening a FIFO to read blocks until a writer comes).
    /// </summary>
    /// <exception cref="IOException">The file could not be read.</exception>
    public static string? NotReplaceable(string path)
    {
        var kind = FileKey.KindOf(path);
        if (kind is FileKind.None or FileKind.Directory || (kind == FileKind.Unknown && new FileInfo(path).Length == 0))
        {
            // A folder is left to the rename, which fails and is logged (nothing blocks on it). Where the kind cannot be
            // told, an empty entry is replaced unopened: a rename never opens what it replaces.
            return null;
        }

        if (KeyMapFile.NotRegular(kind, path) is { } notRegular)
        {
            return $"{notRegular}; it is never replaced";
        }

        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, bufferSize: 0);
        Span<byte> magic = stackalloc byte[KeyMapFileHeader.Magic.Length];
        var read = stream.ReadAtLeast(magic, magic.Length, throwOnEndOfStream: false);
        return read == 0 || (read == magic.Length && magic.SequenceEqual(KeyMapFileHeader.Magic))
            ? null
            : "a file that is not a key-map snapshot has its name (it is never replaced)";
    }

    /// <summary>How old a temporary file must be before a writer deletes it as abandoned (its writer was killed): far longer than any write takes.</summary>
    public static readonly TimeSpan AbandonedAfter = TimeSpan.FromHours(1);

    /// <summary>Deletes temporary files of <paramref name="path"/> older than <see cref="AbandonedAfter"/> (left by a writer killed mid-write); never throws.</summary>
    public static void DeleteAbandoned(string path)
    {
        try
        {
            var folder = Path.GetDirectoryName(path)!;
            foreach (var file in Directory.EnumerateFiles(folder, Path.GetFileName(path) + ".*.tmp"))
            {
                if (DateTime.UtcNow - File.GetLastWriteTimeUtc(file) > AbandonedAfter)
                {
                    File.Delete(file);
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
        }
    }

    /// <summary>Reads the header at the start of <paramref name="stream"/>, or says why it cannot be used.</summary>
    public static KeyMapFileHeader? ReadHeader(Stream stream, Span<byte> head, out string? problem)
    {
        if (stream.ReadAtLeast(head, KeyMapFileHeader.Bytes, throwOnEndOfStream: false) < KeyMapFileHeader.Bytes)
        {
            problem = "it is shorter than its header";
            return null;
        }

        return KeyMapFileHeader.Read(head, out problem);
    }

    /// <summary>
    /// Reads the slots after the header into <paramref name="slots"/> (<see cref="KeyMapFileHeader.Capacity"/> of
    /// them) and checks the file's length, its checksum and the entry count; null when all hold, else the problem.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled (checked before each 1 MiB chunk).</exception>
    public static string? ReadSlots(Stream stream, ReadOnlySpan<byte> head, KeyMapFileHeader header, ulong[] slots, CancellationToken cancellationToken)
    {
        if (stream.Length != header.FileLength)
        {
            return string.Create(CultureInfo.InvariantCulture, $"it is {stream.Length:N0} bytes long where its header says {header.FileLength:N0} (a torn or truncated file)");
        }

        var checksum = new XxHash128();
        checksum.Append(head);
        EachChunk(slots, chunk =>
        {
            cancellationToken.ThrowIfCancellationRequested();
            stream.ReadExactly(chunk);
            checksum.Append(chunk);
        });

        Span<byte> stored = stackalloc byte[KeyMapFileHeader.ChecksumBytes];
        stream.ReadExactly(stored);
        Span<byte> computed = stackalloc byte[KeyMapFileHeader.ChecksumBytes];
        checksum.GetCurrentHash(computed);
        if (!stored.SequenceEqual(computed))
        {
            return "its checksum does not match its content (a damaged or partly written file)";
        }

        var count = slots.LongLength - slots.AsSpan().Count(0UL);
        return count == header.Count
            ? null
            : string.Create(CultureInfo.InvariantCulture, $"it holds {count:N0} entries where its header says {header.Count:N0}");
    }

    /// <summary>Runs <paramref name="action"/> on the slots' bytes, <see cref="ChunkSlots"/> slots at a time, in order.</summary>
    private static void EachChunk(ulong[] slots, Action<Span<byte>> action)
    {
        for (var offset = 0; offset < slots.Length; offset += ChunkSlots)
        {
            action(MemoryMarshal.AsBytes(slots.AsSpan(offset, Math.Min(ChunkSlots, slots.Length - offset))));
        }
    }
}
