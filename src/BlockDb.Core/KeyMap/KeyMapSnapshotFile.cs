using System.Buffers.Binary;
using System.Globalization;
using System.IO.Hashing;
using System.Runtime.InteropServices;
using BlockDb.Drivers;
using BlockDb.Stores;

namespace BlockDb.KeyMap;

/// <summary>
/// What a key-map snapshot file claims: the file it belongs to (<see cref="FileId"/>, <see cref="Token"/>), the key
/// seed its slots were made with, its (W, V) and the anchor row, and the table's shape.
/// </summary>
/// <param name="FileId">The database's <c>FileId</c> setting (random, written once).</param>
/// <param name="Token">The database's <c>KeyMapSnapshotToken</c> setting, committed by the writer of this snapshot just before it wrote it.</param>
/// <param name="Seed">The key seed (<see cref="KeyHasher"/>) of every slot.</param>
/// <param name="CoveredThrough">W: every row with an ID up to this has an entry, at version <paramref name="Version"/>.</param>
/// <param name="Version">V: the generation and schema version.</param>
/// <param name="AnchorId">The highest block ID at or below W when the snapshot was written (0: none).</param>
/// <param name="AnchorHash">That row's hash.</param>
/// <param name="AnchorSize">That row's size.</param>
/// <param name="Capacity">Slots in the table.</param>
/// <param name="Count">Entries (slots not 0).</param>
internal sealed record KeyMapSnapshotHeader(
    Guid FileId,
    Guid Token,
    long Seed,
    long CoveredThrough,
    MapVersion Version,
    long AnchorId,
    byte[] AnchorHash,
    long AnchorSize,
    long Capacity,
    long Count)
{
    /// <summary>Bytes of the header; the slots follow, then a 16-byte XXH128 of everything before it.</summary>
    public const int Bytes = 256;

    /// <summary>Bytes of the checksum at the end of the file.</summary>
    public const int ChecksumBytes = 16;

    /// <summary>The format version this build reads and writes.</summary>
    public const int FormatVersion = 1;

    /// <summary>The first 8 bytes of every snapshot file.</summary>
    public static ReadOnlySpan<byte> Magic => "BlkDKMap"u8;

    /// <summary>The file's length: header, slots, checksum.</summary>
    public long FileLength => Bytes + (Capacity * KeyTable.SlotBytes) + ChecksumBytes;

    /// <summary>Writes the header's bytes (little-endian).</summary>
    public void Write(Span<byte> to)
    {
        to[..Bytes].Clear();
        Magic.CopyTo(to);
        BinaryPrimitives.WriteInt32LittleEndian(to[8..], FormatVersion);
        BinaryPrimitives.WriteInt32LittleEndian(to[12..], Bytes);
        FileId.TryWriteBytes(to[16..32]);
        Token.TryWriteBytes(to[32..48]);
        BinaryPrimitives.WriteInt64LittleEndian(to[48..], Seed);
        BinaryPrimitives.WriteInt64LittleEndian(to[56..], CoveredThrough);
        BinaryPrimitives.WriteInt64LittleEndian(to[64..], Version.Generation);
        BinaryPrimitives.WriteInt64LittleEndian(to[72..], Version.SchemaVersion);
        BinaryPrimitives.WriteInt64LittleEndian(to[80..], AnchorId);
        BinaryPrimitives.WriteInt64LittleEndian(to[88..], AnchorSize);
        to[96] = (byte)AnchorHash.Length;
        AnchorHash.CopyTo(to[97..]);
        BinaryPrimitives.WriteInt64LittleEndian(to[168..], Capacity);
        BinaryPrimitives.WriteInt64LittleEndian(to[176..], Count);
    }

    /// <summary>Reads a header, or says why the bytes are not one this build reads.</summary>
    public static KeyMapSnapshotHeader? Read(ReadOnlySpan<byte> from, out string? problem)
    {
        problem = null;
        if (from.Length < Bytes || !from[..8].SequenceEqual(Magic))
        {
            problem = "it is not a BlockDb key-map snapshot (no magic number)";
            return null;
        }

        var format = BinaryPrimitives.ReadInt32LittleEndian(from[8..]);
        if (format != FormatVersion || BinaryPrimitives.ReadInt32LittleEndian(from[12..]) != Bytes)
        {
            problem = string.Create(CultureInfo.InvariantCulture, $"its format version is {format}; this build reads {FormatVersion}");
            return null;
        }

        var anchorLength = from[96];
        if (anchorLength > BlockHash.MaxBytes)
        {
            problem = "its anchor hash is longer than any block hash";
            return null;
        }

        return new KeyMapSnapshotHeader(
            new Guid(from[16..32]),
            new Guid(from[32..48]),
            BinaryPrimitives.ReadInt64LittleEndian(from[48..]),
            BinaryPrimitives.ReadInt64LittleEndian(from[56..]),
            new MapVersion(BinaryPrimitives.ReadInt64LittleEndian(from[64..]), BinaryPrimitives.ReadInt64LittleEndian(from[72..])),
            BinaryPrimitives.ReadInt64LittleEndian(from[80..]),
            from.Slice(97, anchorLength).ToArray(),
            BinaryPrimitives.ReadInt64LittleEndian(from[88..]),
            BinaryPrimitives.ReadInt64LittleEndian(from[168..]),
            BinaryPrimitives.ReadInt64LittleEndian(from[176..]));
    }
}

/// <summary>
/// The key-map snapshot's file: <see cref="KeyMapSnapshotHeader"/>, the table's slots as they are in memory
/// (little-endian 8-byte slots, empty ones included, so loading is one sequential read into the array), and an XXH128
/// of all of it. Written to a temporary file in the same folder and renamed over the old one, so a reader sees a whole
/// old file or a whole new one; a torn or damaged file fails its checksum and is never used.
/// </summary>
internal static class KeyMapSnapshotFile
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
    public static string WriteTemporary(string path, string databasePath, KeyMapSnapshotHeader header, ulong[] slots)
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
            Span<byte> head = stackalloc byte[KeyMapSnapshotHeader.Bytes];
            header.Write(head);
            checksum.Append(head);
            stream.Write(head);
            EachChunk(slots, chunk =>
            {
                checksum.Append(chunk);
                stream.Write(chunk);
            });

            Span<byte> sum = stackalloc byte[KeyMapSnapshotHeader.ChecksumBytes];
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

        if (KeyMapSnapshot.NotRegular(kind, path) is { } notRegular)
        {
            return $"{notRegular}; it is never replaced";
        }

        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, bufferSize: 0);
        Span<byte> magic = stackalloc byte[KeyMapSnapshotHeader.Magic.Length];
        var read = stream.ReadAtLeast(magic, magic.Length, throwOnEndOfStream: false);
        return read == 0 || (read == magic.Length && magic.SequenceEqual(KeyMapSnapshotHeader.Magic))
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
    public static KeyMapSnapshotHeader? ReadHeader(Stream stream, Span<byte> head, out string? problem)
    {
        if (stream.ReadAtLeast(head, KeyMapSnapshotHeader.Bytes, throwOnEndOfStream: false) < KeyMapSnapshotHeader.Bytes)
        {
            problem = "it is shorter than its header";
            return null;
        }

        return KeyMapSnapshotHeader.Read(head, out problem);
    }

    /// <summary>
    /// Reads the slots after the header into <paramref name="slots"/> (<see cref="KeyMapSnapshotHeader.Capacity"/> of
    /// them) and checks the file's length, its checksum and the entry count; null when all hold, else the problem.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled (checked before each 1 MiB chunk).</exception>
    public static string? ReadSlots(Stream stream, ReadOnlySpan<byte> head, KeyMapSnapshotHeader header, ulong[] slots, CancellationToken cancellationToken)
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

        Span<byte> stored = stackalloc byte[KeyMapSnapshotHeader.ChecksumBytes];
        stream.ReadExactly(stored);
        Span<byte> computed = stackalloc byte[KeyMapSnapshotHeader.ChecksumBytes];
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
