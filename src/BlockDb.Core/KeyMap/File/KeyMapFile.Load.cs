using System.Globalization;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.KeyMap;

// Loading: a file is adopted only when every check passes [K1]-[K3].
internal sealed partial class KeyMapFile
{
    /// <summary>
    /// Reads and checks the snapshot on the caller's connection (inside the caller's transaction, so the checks and the
    /// catch-up that follows see one snapshot of the database when the caller holds one); null when there is none or it
    /// was refused (logged with the reason). Anything at the snapshot's name that is not a regular file (a FIFO, socket,
    /// device, folder, or a symbolic link, which is not followed) is refused without being opened: opening a FIFO to read
    /// blocks until a writer comes.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled (checked between chunks of the read); nothing was adopted.</exception>
    public KeyMapFileLoad? TryLoad(ISqliteConnection connection, KeyHasher hasher, long limitBytes, out string? refused, CancellationToken cancellationToken)
    {
        refused = null;
        if (!BitConverter.IsLittleEndian)
        {
            return null;
        }

        var kind = FileKey.KindOf(FilePath);
        if (kind == FileKind.None)
        {
            return null;
        }

        try
        {
            refused = NotRegular(kind, FilePath);
            if (refused is null)
            {
                refused = Load(connection, hasher, limitBytes, out var load, cancellationToken);
                if (refused is null)
                {
                    return load;
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or OutOfMemoryException)
        {
            // The file's errors only: a database error of the checks' reads propagates as the same read of a scan would
            // (it may have ended the caller's transaction, which the session must see).
            refused = $"reading it failed ({e.GetType().Name}: {e.Message})";
        }

        Log.KeyMapSnapshotRefused(logger, FilePath, databasePath, refused);
        return null;
    }

    /// <summary>
    /// Why the entry of <paramref name="kind"/> at <paramref name="path"/> is not opened as a snapshot, or null when it may
    /// be. Where the kind cannot be told (no Linux <c>statx</c>), a file shorter than a header is refused unopened: a
    /// FIFO, socket or device has length 0 there.
    /// </summary>
    internal static string? NotRegular(FileKind kind, string path) => kind switch
    {
        FileKind.Regular => null,
        FileKind.Unknown => new FileInfo(path).Length < KeyMapFileHeader.Bytes ? "it is shorter than its header, or not a regular file (not opened)" : null,
        FileKind.SymbolicLink => "it is a symbolic link, not BlockDb's own regular file (links are not followed; it was not opened)",
        FileKind.Directory => "it is a folder (not opened)",
        _ => "it is a FIFO, socket or device, not a regular file (not opened: reading one may block or never end)",
    };

    private string? Load(ISqliteConnection connection, KeyHasher hasher, long limitBytes, out KeyMapFileLoad load, CancellationToken cancellationToken)
    {
        load = default;
        cancellationToken.ThrowIfCancellationRequested();
        using var stream = new FileStream(FilePath, FileMode.Open, FileAccess.Read, FileShare.Read | FileShare.Delete, bufferSize: 0, FileOptions.SequentialScan);
        Span<byte> head = stackalloc byte[KeyMapFileHeader.Bytes];
        var header = KeyMapFileFormat.ReadHeader(stream, head, out var problem);
        if (header is null)
        {
            return problem;
        }

        // The database first (a few rows), so a stale snapshot is refused before its slots are read.
        var identity = SnapshotIdentity.Read(connection);
        if (identity.FileId is null || identity.FileId != header.FileId)
        {
            return identity.FileId is null
                ? "this database records no FileId (no snapshot was written for it, so the file belongs to another database)"
                : "it belongs to another database file (its FileId differs)";
        }

        if (identity.Token != header.Token)
        {
            return "the database's snapshot token differs (a newer snapshot was begun since, or this is an older copy of the database, restored or without its WAL)";
        }

        if (identity.Seed != header.Seed || hasher.Seed != header.Seed)
        {
            return "its key seed is not the database's";
        }

        var (maxBlockId, version) = ReadState(connection);
        if (version != header.Version)
        {
            return string.Create(CultureInfo.InvariantCulture, $"the database is at generation {version.Generation}, schema version {version.SchemaVersion}, the snapshot at {header.Version.Generation}, {header.Version.SchemaVersion} (rows were changed or the schema altered since)");
        }

        if (maxBlockId < header.CoveredThrough)
        {
            return string.Create(CultureInfo.InvariantCulture, $"the database's MaxBlockId {maxBlockId} is below the snapshot's {header.CoveredThrough} (an older copy of the database)");
        }

        if (header.AnchorId > 0 && !AnchorHolds(connection, header))
        {
            return string.Create(CultureInfo.InvariantCulture, $"block {header.AnchorId} no longer holds the hash and size the snapshot recorded (an older copy of the database that grew again, or the block was collected)");
        }

        if (header.Capacity < KeyTable.MinCapacity || header.Capacity > Array.MaxLength || header.Count > (long)(header.Capacity * KeyTable.MaxLoad) || header.Count < 0)
        {
            return "its table's size is not one BlockDb writes";
        }

        if (header.Capacity * KeyTable.SlotBytes > limitBytes)
        {
            return string.Create(CultureInfo.InvariantCulture, $"its table ({header.Capacity * KeyTable.SlotBytes:N0} bytes) is above BlockDb:Index:KeyMapMemoryLimitMegabytes");
        }

        var slots = new ulong[header.Capacity];
        problem = KeyMapFileFormat.ReadSlots(stream, head, header, slots, cancellationToken);
        if (problem is not null)
        {
            return problem;
        }

        load = new KeyMapFileLoad(slots, header.Count, header.CoveredThrough, header.Version, header.Token);
        return null;
    }

    private static bool AnchorHolds(ISqliteConnection connection, KeyMapFileHeader header)
    {
        using var read = connection.Prepare(BlockDbSql.VerifyBlockId);
        read.BindInt64(1, header.AnchorId);
        read.BindBlob(2, header.AnchorHash);
        read.BindInt64(3, header.AnchorSize);
        try
        {
            return read.Step();
        }
        finally
        {
            read.Reset();
        }
    }
}
