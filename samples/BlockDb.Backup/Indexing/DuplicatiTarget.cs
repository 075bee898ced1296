using System.Globalization;
using System.Security.Cryptography;
using BlockDb.Backup.Cli;
using BlockDb.Backup.Hashing;
using Microsoft.Data.Sqlite;

namespace BlockDb.Backup.Indexing;

/// <summary>
/// <c>index</c> into a Duplicati local database, which BlockDb recognised (<see cref="BlockLayout.Duplicati"/>). BlockDb
/// does not expose the file's <c>Configuration</c>, so the sample reads <c>blocksize</c>, <c>blockhash</c> and
/// <c>filehash</c> itself, on its own Microsoft.Data.Sqlite connection opened as Duplicati opens the file and closed
/// before BlockDb opens it (two connections to one file in one process would let a close drop the other's POSIX locks).
/// In the same short transaction it inserts an <c>Operation</c> row ("Backup", now) when the file has none, as Duplicati
/// does at the start of each run: BlockDb registers volumes under the latest operation and refuses when there is none.
/// Nothing is written when a setting is refused.
/// </summary>
/// <param name="Blocksize">Configuration's <c>blocksize</c>, in bytes.</param>
/// <param name="HashSize">The block hash size in bytes (32: SHA-256, the only algorithm the sample hashes with).</param>
/// <param name="OperationId">The Operation row new volumes are registered under.</param>
/// <param name="OperationInserted">Whether the sample inserted that row (the file had none).</param>
/// <param name="VolumeNames">How Duplicati names this backup's Blocks volumes (Configuration's <c>prefix</c>, <c>compression-module</c>, <c>encryption-module</c>).</param>
internal sealed record DuplicatiTarget(int Blocksize, int HashSize, long OperationId, bool OperationInserted, DuplicatiVolumeNames VolumeNames)
{
    /// <summary>The only hash the sample's hasher computes (<see cref="Sha256Base64"/>), and Duplicati's default.</summary>
    public const string Sha256 = "SHA256";

    /// <summary>
    /// Reads the file's settings, refuses a <paramref name="requestedBlockSize"/> or hash algorithm the run cannot honour,
    /// then inserts the Operation row when there is none. The file must not be open in this process.
    /// </summary>
    /// <param name="path">The Duplicati database.</param>
    /// <param name="requestedBlockSize">The <c>--block-size</c> given, or <see langword="null"/>.</param>
    /// <param name="busyTimeout">How long to wait for another writer's lock (Duplicati's), in milliseconds: <c>BlockDb:Pragmas:BusyTimeout</c>.</param>
    /// <param name="now">The Operation row's time.</param>
    /// <returns>The settings to index with.</returns>
    /// <exception cref="UsageException">A <c>--block-size</c> other than the file's, a <c>blockhash</c>/<c>filehash</c> other than SHA256, no valid <c>blocksize</c>, or a <c>prefix</c> with a hyphen (Duplicati refuses one); nothing was written.</exception>
    /// <exception cref="SqliteException">SQLite failed, e.g. <c>SQLITE_BUSY</c> after <paramref name="busyTimeout"/> while Duplicati holds the write lock; nothing was written.</exception>
    public static DuplicatiTarget Prepare(string path, long? requestedBlockSize, int busyTimeout, DateTime now)
    {
        // Microsoft.Data.Sqlite retries a busy statement until its command timeout (30 s by default) on top of busy_timeout:
        // bound that by the busy timeout too (whole seconds, at least 1; 0 would mean forever).
        var builder = new SqliteConnectionStringBuilder
        {
            DataSource = path,
            Mode = SqliteOpenMode.ReadWrite,
            Pooling = false,
            DefaultTimeout = Math.Max(1, (busyTimeout + 999) / 1000),
        };
        using var connection = new SqliteConnection(builder.ToString());
        connection.Open();
        using (var pragma = connection.CreateCommand())
        {
            // Wait for Duplicati's write as BlockDb's connection would; never take the file from it.
            pragma.CommandText = string.Create(CultureInfo.InvariantCulture, $"PRAGMA busy_timeout={busyTimeout}");
            pragma.ExecuteNonQuery();
        }

        // BEGIN IMMEDIATE (deferred: false): the Operation count and its insert see one state of the file.
        using var transaction = connection.BeginTransaction(deferred: false);
        var configuration = ReadConfiguration(connection, transaction);
        var blocksize = ReadBlocksize(configuration);
        if (requestedBlockSize is { } requested && requested != blocksize)
        {
            throw new UsageException(
                $"--block-size {requested.ToString("N0", CultureInfo.InvariantCulture)} differs from the Duplicati database's block size {blocksize.ToString("N0", CultureInfo.InvariantCulture)} bytes (Configuration 'blocksize'). "
                + $"Duplicati never changes a backup's block size (BlockSizeChangeNotSupported): leave --block-size out or give {blocksize.ToString(CultureInfo.InvariantCulture)}. Nothing was written.");
        }

        foreach (var key in (string[])["blockhash", "filehash"])
        {
            var name = configuration.GetValueOrDefault(key);
            if (!string.Equals(name, Sha256, StringComparison.OrdinalIgnoreCase))
            {
                throw new UsageException(
                    $"The Duplicati database's '{key}' is {(name is null ? "missing" : $"'{name}'")}; this sample hashes blocks and files with {Sha256} only (Duplicati's default). Nothing was written.");
            }
        }

        var volumeNames = DuplicatiVolumeNames.From(configuration);
        var (operationId, inserted) = EnsureOperation(connection, transaction, now);
        transaction.Commit();
        return new DuplicatiTarget(blocksize, SHA256.HashSizeInBytes, operationId, inserted, volumeNames);
    }

    private static Dictionary<string, string> ReadConfiguration(SqliteConnection connection, SqliteTransaction transaction)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = """SELECT "Key", "Value" FROM "Configuration" """;
        var rows = new Dictionary<string, string>(StringComparer.Ordinal);
        using var reader = command.ExecuteReader();
        while (reader.Read())
        {
            rows[reader.GetString(0)] = reader.GetString(1);
        }

        return rows;
    }

    private static int ReadBlocksize(Dictionary<string, string> configuration) =>
        configuration.GetValueOrDefault("blocksize") is { } text && int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var blocksize) && blocksize >= 1024
            ? blocksize
            : throw new UsageException("The Duplicati database has no valid 'blocksize' in Configuration (Duplicati writes it at the start of its first backup). Nothing was written.");

    /// <summary>The latest Operation row, or a new one ("Backup", <paramref name="now"/> in epoch seconds UTC) as Duplicati inserts per run.</summary>
    private static (long Id, bool Inserted) EnsureOperation(SqliteConnection connection, SqliteTransaction transaction, DateTime now)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = """SELECT MAX("ID") FROM "Operation" """;
        if (command.ExecuteScalar() is long id)
        {
            return (id, false);
        }

        command.CommandText = """INSERT INTO "Operation" ("Description", "Timestamp") VALUES (@Description, @Timestamp) RETURNING "ID" """;
        command.Parameters.AddWithValue("@Description", "Backup");
        command.Parameters.AddWithValue("@Timestamp", new DateTimeOffset(now.ToUniversalTime()).ToUnixTimeSeconds());
        return ((long)command.ExecuteScalar()!, true);
    }

    /// <summary>
    /// A file's blocklist blocks, in order, as Duplicati's splitter cuts them (<see cref="DuplicatiBlocklists"/>): the
    /// concatenated binary hashes of its blocks in blocklists of <c>blocksize / hashsize</c>, each hashed with SHA-256.
    /// None for a file of 0 or 1 block.
    /// </summary>
    /// <param name="blocks">The file's blocks.</param>
    /// <param name="buffer">A buffer of at least <see cref="Blocksize"/> bytes.</param>
    /// <returns>The blocklist blocks.</returns>
    public List<BlockKey> Blocklists(IReadOnlyList<BlockKey> blocks, byte[] buffer)
    {
        var count = DuplicatiBlocklists.Count(blocks.Count, Blocksize, HashSize);
        var lists = new List<BlockKey>((int)count);
        if (count == 0)
        {
            return lists;
        }

        var keys = blocks as BlockKey[] ?? [.. blocks];
        for (var k = 0L; k < count; k++)
        {
            var size = DuplicatiBlocklists.Write(keys, k, Blocksize, HashSize, buffer);
            lists.Add(new BlockKey(Sha256Base64.Binary(buffer.AsSpan(0, size)), size));
        }

        return lists;
    }
}
