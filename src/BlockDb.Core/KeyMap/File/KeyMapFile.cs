using System.Diagnostics;
using System.Globalization;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Sqlite;
using Microsoft.Extensions.Logging;

namespace BlockDb.KeyMap;

/// <summary>
/// The persisted key map of one database file (issue 13 item 6): written when the database is disposed, loaded at the
/// map's first use in place of the whole-table read when it provably belongs to this very file, then caught up above
/// its W as any map is. The map may hold stale entries, never miss a row: so a snapshot is used only when every check
/// below holds, and anything else (or any error reading it) falls back to the ordinary full load.
/// </summary>
/// <remarks>
/// A file is as good as the map that wrote it when it names the database's latest token [K1], the database is still at
/// its version with its anchor row unchanged [K2], and its bytes check [K3] (docs/ARCHITECTURE.md, "The key map").
/// </remarks>
internal sealed partial class KeyMapFile(string databasePath, ILogger logger)
{
    /// <summary>
    /// Longest, in milliseconds, a disposing database that wrote blocks waits for another connection's lock to commit its
    /// token (a snapshot is not worth a long wait); one that wrote none does not wait at all. The providers' own retries
    /// are bounded by it too (the connection is opened with it as its busy timeout).
    /// </summary>
    public const int WriteLockWaitMilliseconds = 1000;

    /// <summary>The snapshot file.</summary>
    public string FilePath { get; } = KeyMapFileFormat.PathOf(databasePath);

    /// <summary>The file's recorded key seed, or a random one when it has none yet (read when the database opens).</summary>
    public static KeyHasher ReadHasher(ISqliteConnection connection) =>
        SnapshotIdentity.Read(connection).Seed is { } seed ? new KeyHasher(seed) : KeyHasher.Random();

    /// <summary>
    /// Writes the snapshot of a map that disposing its database left still (no session can add entries): decides in a
    /// read transaction whether there is anything to write, then commits a new token under the write lock after checking
    /// the database is still at the map's version, writes the file beside the database and renames it over the old one.
    /// Never waits for another connection's lock longer than <see cref="WriteLockWaitMilliseconds"/>, and not at all when
    /// the map's database wrote no blocks (a reader's dispose never waits for a writer). Never throws: a failure is logged
    /// and leaves at worst a snapshot the next open refuses.
    /// </summary>
    /// <param name="capture">The map's table and (W, V); <see cref="KeyMapFileCapture.Unchanged"/> when it was loaded from the snapshot the file now names and gained nothing since.</param>
    /// <param name="hasher">The map's key seed.</param>
    /// <param name="open">Opens a connection to the database whose provider gives up on a lock after the given milliseconds.</param>
    public void Write(KeyMapFileCapture capture, KeyHasher hasher, Func<int, ISqliteConnection> open)
    {
        if (!BitConverter.IsLittleEndian)
        {
            return;
        }

        string? temporary = null;
        var started = Stopwatch.GetTimestamp();
        try
        {
            if (KeyMapFileFormat.NotReplaceable(FilePath) is { } kept)
            {
                Log.KeyMapSnapshotSkipped(logger, FilePath, kept);
                return;
            }

            // A database that wrote blocks waits a little for the write lock; one that only read (a restore or verify
            // beside a backup) tries it once and never waits for the writer.
            var wait = capture.Wrote ? WriteLockWaitMilliseconds : 0;
            using var connection = open(WriteLockWaitMilliseconds);
            connection.Execute(string.Create(CultureInfo.InvariantCulture, $"PRAGMA busy_timeout = {wait}"));

            // Nothing to write, or a file the map no longer fits: decided without asking for the write lock.
            var skip = Transactions.Run(connection, BlockDbSql.BeginRead, () => Check(connection, capture, hasher, out _));
            KeyMapFileHeader? header = null;
            if (skip is null)
            {
                try
                {
                    (skip, header) = Transactions.Run(connection, BlockDbSql.Begin.Text, () => Commit(connection, capture, hasher), retry: false);
                }
                catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Busy)
                {
                    skip = capture.Wrote
                        ? string.Create(CultureInfo.InvariantCulture, $"another connection holds the write lock (or, in a rollback-journal mode, a read lock the token's commit needs) beyond {wait} ms")
                        : "another connection holds the write lock (or, in a rollback-journal mode, a read lock the token's commit needs), and a database that wrote no blocks does not wait for it";
                }
            }

            if (skip is not null)
            {
                Log.KeyMapSnapshotSkipped(logger, FilePath, skip);
                return;
            }

            KeyMapFileFormat.DeleteAbandoned(FilePath);
            temporary = KeyMapFileFormat.WriteTemporary(FilePath, databasePath, header!, capture.Slots);

            // Another writer may have committed a newer token meanwhile: its file, not this one, belongs in place.
            if (SnapshotIdentity.Read(connection).Token != header!.Token)
            {
                Log.KeyMapSnapshotSkipped(logger, FilePath, "another database or process began a newer snapshot while this one was written");
                return;
            }

            File.Move(temporary, FilePath, overwrite: true);
            temporary = null;
            Log.KeyMapSnapshotWritten(logger, FilePath, header.Count, header.CoveredThrough, header.FileLength, (long)Stopwatch.GetElapsedTime(started).TotalMilliseconds);
        }
        catch (Exception e)
        {
            Log.KeyMapSnapshotWriteFailed(logger, FilePath, $"{e.GetType().Name}: {e.Message}");
        }
        finally
        {
            if (temporary is not null)
            {
                TryDelete(temporary);
            }
        }
    }

    /// <summary>
    /// Why no snapshot should be written for <paramref name="capture"/> on the database as the caller's transaction sees
    /// it, or null: run first in a read transaction (no lock asked for when it says skip), then again under the write lock.
    /// </summary>
    private static string? Check(ISqliteConnection connection, KeyMapFileCapture capture, KeyHasher hasher, out SnapshotIdentity identity)
    {
        identity = default;
        var (maxBlockId, version) = ReadState(connection);
        if (version != capture.Version)
        {
            return "the database's generation or schema version moved since the map last caught up";
        }

        if (maxBlockId < capture.CoveredThrough)
        {
            return "the database's MaxBlockId is below the map's watermark (the file was replaced while open)";
        }

        identity = SnapshotIdentity.Read(connection);
        if (identity.Seed is { } seed && seed != hasher.Seed)
        {
            return "the database's key seed was recorded by another database or process after this one opened; the next open uses it";
        }

        return capture.Unchanged is { } loaded && identity.Token == loaded
            ? "the map was loaded from the current snapshot and gained nothing since"
            : null;
    }

    /// <summary>Under the write lock: checks the database against the map again, records the file's identity and seed once, and a new token.</summary>
    private static (string? Skip, KeyMapFileHeader? Header) Commit(ISqliteConnection connection, KeyMapFileCapture capture, KeyHasher hasher)
    {
        if (Check(connection, capture, hasher, out var identity) is { } skip)
        {
            return (skip, null);
        }

        var fileId = identity.FileId ?? Guid.NewGuid();
        if (identity.FileId is null)
        {
            WriteSetting(connection, BlockDbSql.WriteSettingIfMissing, BlockDbSql.FileIdSetting, fileId.ToString("N"));
        }

        if (identity.Seed is null)
        {
            WriteSetting(connection, BlockDbSql.WriteSettingIfMissing, BlockDbSql.KeyMapSeedSetting, hasher.Seed.ToString(CultureInfo.InvariantCulture));
        }

        var token = Guid.NewGuid();
        WriteSetting(connection, BlockDbSql.WriteSetting, BlockDbSql.KeyMapSnapshotTokenSetting, token.ToString("N"));
        var (anchorId, anchorHash, anchorSize) = ReadAnchor(connection, capture.CoveredThrough);
        return (null, new KeyMapFileHeader(fileId, token, hasher.Seed, capture.CoveredThrough, capture.Version, anchorId, anchorHash, anchorSize, capture.Slots.LongLength, capture.Count));
    }

    private static void WriteSetting(ISqliteConnection connection, SqlStatement statement, string name, string value)
    {
        using var write = connection.Prepare(statement);
        write.BindText(1, name);
        write.BindText(2, value);
        write.ExecuteNonQuery();
    }

    private static (long MaxBlockId, MapVersion Version) ReadState(ISqliteConnection connection)
    {
        using var state = connection.Prepare(BlockDbSql.ReadKeyMapState);
        try
        {
            return state.Step()
                ? (state.ColumnInt64(0), new MapVersion(state.ColumnInt64(1), state.ColumnInt64(2)))
                : throw new BlockDbFormatException("The KeyMap file has no BlockDbState row.");
        }
        finally
        {
            state.Reset();
        }
    }

    private static (long Id, byte[] Hash, long Size) ReadAnchor(ISqliteConnection connection, long through)
    {
        using var anchor = connection.Prepare(BlockDbSql.KeyMapSnapshotAnchor);
        anchor.BindInt64(1, through);
        try
        {
            Span<byte> hash = stackalloc byte[BlockHash.MaxBytes];
            if (!anchor.Step())
            {
                return (0, [], 0);
            }

            var length = anchor.ColumnBlob(1, hash);
            return length is >= 1 and <= BlockHash.MaxBytes ? (anchor.ColumnInt64(0), hash[..length].ToArray(), anchor.ColumnInt64(2)) : (0, [], 0);
        }
        finally
        {
            anchor.Reset();
        }
    }

    private static void TryDelete(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }

    /// <summary>The three settings a snapshot is checked against (each null when absent or not readable).</summary>
    private readonly record struct SnapshotIdentity(Guid? FileId, long? Seed, Guid? Token)
    {
        public static SnapshotIdentity Read(ISqliteConnection connection)
        {
            using var read = connection.Prepare(BlockDbSql.ReadSnapshotIdentity);
            var identity = default(SnapshotIdentity);
            try
            {
                while (read.Step())
                {
                    var value = read.ColumnText(1);
                    identity = read.ColumnText(0) switch
                    {
                        BlockDbSql.FileIdSetting => identity with { FileId = Guid.TryParseExact(value, "N", out var id) ? id : null },
                        BlockDbSql.KeyMapSeedSetting => identity with { Seed = long.TryParse(value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var seed) ? seed : null },
                        BlockDbSql.KeyMapSnapshotTokenSetting => identity with { Token = Guid.TryParseExact(value, "N", out var token) ? token : null },
                        _ => identity,
                    };
                }
            }
            finally
            {
                read.Reset();
            }

            return identity;
        }
    }
}
