using Microsoft.Data.Sqlite;

namespace BlockDb.Duplicati.Fixture.Replay;

/// <summary>
/// Duplicati's <c>LocalBackupDatabase</c> (<c>Duplicati/Library/Main/Database/Local/LocalBackupDatabase.cs</c>) on our
/// own statement text, with its statement shapes, call order, checks and commit points (facts §4): prepared commands
/// bound again at every call, <c>INSERT …; SELECT last_insert_rowid()</c> in one command where Duplicati does so, a
/// blockset's entries as one <c>INSERT … SELECT</c> each, and the <c>DeletedBlock</c> take-back cache built at open
/// from the environment variable <c>DUPLICATI_DELETEDBLOCKCACHESIZE</c> (default 10000; below 0 off).
/// </summary>
public sealed class DuplicatiBackupStatements : DuplicatiStatements, IDuplicatiBackupDatabase
{
    private const int PathPrefixCacheSize = 5;
    private readonly KeyValuePair<string?, long>[] _prefixCache = new KeyValuePair<string?, long>[PathPrefixCacheSize];
    private readonly HashSet<string> _blocklistHashesSeen = new(StringComparer.Ordinal);
    private int _prefixIndex;
    private long _filesetId = -1;

    private Statement _findBlock = null!;
    private Statement _insertBlock = null!;
    private Statement _findBlockset = null!;
    private Statement _insertBlockset = null!;
    private Statement _insertBlocklistHash = null!;
    private Statement _insertBlocksetEntry = null!;
    private Statement _findMetadataset = null!;
    private Statement _insertMetadataset = null!;
    private Statement _findFileLookup = null!;
    private Statement _insertFileLookup = null!;
    private Statement _insertFilesetEntry = null!;
    private Statement _findFile = null!;
    private Statement _fileHash = null!;
    private Statement _blocklistHashKnown = null!;
    private Statement _findPrefix = null!;
    private Statement _insertPrefix = null!;
    private Statement _insertIndexBlockLink = null!;
    private Statement? _moveFromDeleted;
    private Statement? _findInDeleted;
    private Dictionary<string, Dictionary<long, long>>? _deletedBlocks;

    private DuplicatiBackupStatements(SqliteConnection connection, bool ownsConnection)
        : base(connection, ownsConnection)
    {
    }

    /// <summary>How many blocks <see cref="AddBlockAsync"/> took back from <c>DeletedBlock</c>.</summary>
    public long BlocksTakenBack { get; private set; }

    /// <summary>
    /// Opens the backup's database object on a connection opened as Duplicati opens it (<see cref="DuplicatiConnection.Open"/>):
    /// begins the always-open transaction, inserts the <c>Operation</c> row "Backup", prepares the statements and builds
    /// the <c>DeletedBlock</c> take-back cache.
    /// </summary>
    /// <param name="connection">An open connection with no transaction.</param>
    /// <param name="operationTimeUtc">The backup's time (the Operation row's and the fileset's).</param>
    /// <param name="ownsConnection">Whether disposing the object disposes the connection.</param>
    /// <param name="deletedBlockCacheSize">Duplicati's <c>DUPLICATI_DELETEDBLOCKCACHESIZE</c>: below 0 no take-back, 0 always the temporary table, above 0 the most rows held in a dictionary; null reads the environment variable (default 10000).</param>
    /// <param name="cancellationToken">Cancels the setup.</param>
    /// <returns>The object; dispose it (rolls back what is not committed).</returns>
    public static async Task<DuplicatiBackupStatements> OpenAsync(SqliteConnection connection, DateTime operationTimeUtc, bool ownsConnection, long? deletedBlockCacheSize = null, CancellationToken cancellationToken = default)
    {
        var db = new DuplicatiBackupStatements(connection, ownsConnection);
        try
        {
            await db.StartOperationAsync("Backup", operationTimeUtc, cancellationToken);
            db.PrepareBackupStatements();
            await db.LoadDeletedBlocksAsync(deletedBlockCacheSize, cancellationToken);
            return db;
        }
        catch
        {
            await db.DisposeAsync();
            throw;
        }
    }

    /// <inheritdoc/>
    public ValueTask<IReadOnlyDictionary<string, string>> GetConfigurationAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return ValueTask.FromResult<IReadOnlyDictionary<string, string>>(DuplicatiConfiguration.ReadRows(Connection, Transaction.Current));
    }

    /// <inheritdoc/>
    public ValueTask SetConfigurationAsync(IReadOnlyDictionary<string, string> rows, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        DuplicatiConfiguration.WriteRows(Connection, Transaction.Current, rows);
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public async ValueTask<long> CountBlocksLargerThanAsync(long blocksize, CancellationToken cancellationToken) =>
        await ScalarAsync("""SELECT COUNT(*) FROM "Block" WHERE "Size" > @Size""", cancellationToken, ("@Size", blocksize));

    /// <inheritdoc/>
    public async ValueTask<(long Id, DateTime TimeUtc)?> GetLastFilesetAsync(CancellationToken cancellationToken)
    {
        using var command = Connection.CreateCommand();
        command.Transaction = Transaction.Current;
        command.CommandText = """SELECT "ID", "Timestamp" FROM "Fileset" ORDER BY "Timestamp" DESC""";
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        return await reader.ReadAsync(cancellationToken)
            ? (reader.GetInt64(0), DateTime.UnixEpoch.AddSeconds(reader.GetInt64(1)))
            : null;
    }

    /// <inheritdoc/>
    public async ValueTask<long> CreateFilesetAsync(long volumeId, DateTime timestampUtc, CancellationToken cancellationToken)
    {
        using var insert = new Statement(Transaction, """INSERT INTO "Fileset" ("OperationID", "Timestamp", "VolumeID", "IsFullBackup") VALUES (@OperationId, @Timestamp, @VolumeId, @IsFullBackup); SELECT last_insert_rowid();""", "@OperationId", "@Timestamp", "@VolumeId", "@IsFullBackup");
        _filesetId = await insert.Bind(0, OperationId).Bind(1, DuplicatiConstants.EpochSeconds(timestampUtc)).Bind(2, volumeId).Bind(3, 0L).ScalarAsync(cancellationToken);
        return _filesetId;
    }

    /// <inheritdoc/>
    public async ValueTask UpdateFullBackupStateAsync(long filesetId, bool isFullBackup, CancellationToken cancellationToken) =>
        await ExecuteAsync("""UPDATE "Fileset" SET "IsFullBackup" = @IsFullBackup WHERE "ID" = @FilesetId""", cancellationToken, ("@IsFullBackup", isFullBackup ? 1L : 0L), ("@FilesetId", filesetId));

    /// <inheritdoc/>
    public async ValueTask<long> FindBlockIdAsync(string hash, long size, CancellationToken cancellationToken) =>
        await _findBlock.Bind(0, hash).Bind(1, size).ScalarAsync(cancellationToken);

    /// <inheritdoc/>
    public async ValueTask<bool> AddBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken)
    {
        if (await FindBlockIdAsync(hash, size, cancellationToken) != -1)
        {
            return false;
        }

        if (_moveFromDeleted is not null)
        {
            if (_deletedBlocks is not null)
            {
                if (_deletedBlocks.TryGetValue(hash, out var sizes) && sizes.TryGetValue(size, out var deletedId))
                {
                    await _moveFromDeleted.Bind(0, deletedId).NonQueryAsync(cancellationToken);
                    sizes.Remove(size);
                    if (sizes.Count == 0)
                    {
                        _deletedBlocks.Remove(hash);
                    }

                    BlocksTakenBack++;
                    return false;
                }
            }
            else if (_findInDeleted is not null)
            {
                var deletedId = await _findInDeleted.Bind(0, hash).Bind(1, size).ScalarAsync(cancellationToken);
                if (deletedId != -1)
                {
                    var moved = await _moveFromDeleted.Bind(0, deletedId).NonQueryAsync(cancellationToken);
                    if (moved != 2)
                    {
                        throw new InvalidOperationException($"Failed to move block {hash} with size {size}, result count: {moved}");
                    }

                    BlocksTakenBack++;
                    return false;
                }
            }
        }

        var inserted = await _insertBlock.Bind(0, hash).Bind(1, volumeId).Bind(2, size).NonQueryAsync(cancellationToken);
        if (inserted != 1)
        {
            throw new InvalidOperationException($"Failed to insert block {hash} with size {size}, result count: {inserted}");
        }

        return true;
    }

    /// <inheritdoc/>
    public async ValueTask<bool> IsBlocklistHashKnownAsync(string hash, CancellationToken cancellationToken)
    {
        var first = await _blocklistHashKnown.Bind(0, hash).ScalarAsync(cancellationToken);
        return (first != -1 && first != _filesetId) || !_blocklistHashesSeen.Add(hash);
    }

    /// <inheritdoc/>
    public async ValueTask<(bool Created, long Id)> AddBlocksetAsync(string fullHash, long length, int blocksize, IReadOnlyList<string> blockHashes, IReadOnlyList<string> blocklistHashes, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(blockHashes);
        ArgumentNullException.ThrowIfNull(blocklistHashes);
        var id = await _findBlockset.Bind(0, fullHash).Bind(1, length).ScalarAsync(cancellationToken);
        if (id != -1)
        {
            return (false, id);
        }

        id = await _insertBlockset.Bind(0, length).Bind(1, fullHash).ScalarAsync(cancellationToken);
        _insertBlocklistHash.Bind(0, id);
        for (var i = 0; i < blocklistHashes.Count; i++)
        {
            var c = await _insertBlocklistHash.Bind(1, (long)i).Bind(2, blocklistHashes[i]).NonQueryAsync(cancellationToken);
            if (c != 1)
            {
                throw new InvalidOperationException($"Failed to insert blocklist hash {blocklistHashes[i]} for blockset {id}, result count: {c}");
            }
        }

        _insertBlocksetEntry.Bind(0, id);
        var remaining = length;
        for (var i = 0; i < blockHashes.Count; i++)
        {
            var size = Math.Min(remaining, blocksize);
            var c = await _insertBlocksetEntry.Bind(1, (long)i).Bind(2, blockHashes[i]).Bind(3, size).NonQueryAsync(cancellationToken);
            if (c != 1)
            {
                throw new InvalidOperationException($"Unexpected result count: {c}, expected 1 (issue #1400: hash {blockHashes[i]}, size {size}, blockset {id}, index {i})");
            }

            remaining -= blocksize;
        }

        await CommitAsync("AddBlockset", cancellationToken);
        return (true, id);
    }

    /// <inheritdoc/>
    public async ValueTask<(bool Found, long Id)> GetMetadatasetIdAsync(string hash, long size, CancellationToken cancellationToken)
    {
        if (size <= 0)
        {
            return (false, -2);
        }

        var id = await _findMetadataset.Bind(0, hash).Bind(1, size).ScalarAsync(cancellationToken);
        return (id != -1, id);
    }

    /// <inheritdoc/>
    public async ValueTask<(bool Created, long Id)> AddMetadatasetAsync(string hash, long size, long blocksetId, string? content, CancellationToken cancellationToken)
    {
        var (found, id) = await GetMetadatasetIdAsync(hash, size, cancellationToken);
        if (found)
        {
            return (false, id);
        }

        id = await _insertMetadataset.Bind(0, blocksetId).Bind(1, content).ScalarAsync(cancellationToken);
        await CommitAsync("AddMetadataset", cancellationToken);
        return (true, id);
    }

    /// <inheritdoc/>
    public async ValueTask<long> GetOrCreatePathPrefixAsync(string prefix, CancellationToken cancellationToken)
    {
        for (var i = 0; i < PathPrefixCacheSize; i++)
        {
            var entry = _prefixCache[(i + _prefixIndex) % PathPrefixCacheSize];
            if (string.Equals(entry.Key, prefix, StringComparison.Ordinal))
            {
                return entry.Value;
            }
        }

        var id = await _findPrefix.Bind(0, prefix).ScalarAsync(cancellationToken);
        if (id < 0)
        {
            id = await _insertPrefix.Bind(0, prefix).ScalarAsync(cancellationToken);
        }

        _prefixIndex = (_prefixIndex + 1) % PathPrefixCacheSize;
        _prefixCache[_prefixIndex] = new KeyValuePair<string?, long>(prefix, id);
        return id;
    }

    /// <inheritdoc/>
    public async ValueTask<PreviousFileEntry?> GetFileEntryAsync(long prefixId, string name, long filesetId, CancellationToken cancellationToken)
    {
        await using var reader = await _findFile.Bind(0, prefixId).Bind(1, name).Bind(2, filesetId).ReaderAsync(cancellationToken);
        return await reader.ReadAsync(cancellationToken)
            ? new PreviousFileEntry(reader.GetInt64(0), new DateTime(reader.GetInt64(1), DateTimeKind.Utc), reader.GetInt64(2), reader.GetString(3), reader.GetInt64(4))
            : null;
    }

    /// <inheritdoc/>
    public async ValueTask<string?> GetFileHashAsync(long fileId, CancellationToken cancellationToken) =>
        (await _fileHash.Bind(0, fileId).ScalarObjectAsync(cancellationToken))?.ToString();

    /// <inheritdoc/>
    public async ValueTask AddFileAsync(long prefixId, string name, DateTime lastModifiedUtc, long blocksetId, long metadataId, CancellationToken cancellationToken)
    {
        var fileId = await _findFileLookup.Bind(0, blocksetId).Bind(1, metadataId).Bind(2, name).Bind(3, prefixId).ScalarAsync(cancellationToken);
        if (fileId == -1)
        {
            fileId = await _insertFileLookup.Bind(0, prefixId).Bind(1, name).Bind(2, blocksetId).Bind(3, metadataId).ScalarAsync(cancellationToken);
            await CommitAsync("AddFile", cancellationToken);
        }

        await AddUnmodifiedAsync(fileId, lastModifiedUtc, cancellationToken);
    }

    /// <inheritdoc/>
    public async ValueTask AddUnmodifiedAsync(long fileId, DateTime lastModifiedUtc, CancellationToken cancellationToken) =>
        await _insertFilesetEntry.Bind(0, _filesetId).Bind(1, fileId).Bind(2, lastModifiedUtc.ToUniversalTime().Ticks).NonQueryAsync(cancellationToken);

    /// <inheritdoc/>
    public async ValueTask AddIndexBlockLinkAsync(long indexVolumeId, long blockVolumeId, CancellationToken cancellationToken) =>
        await _insertIndexBlockLink.Bind(0, indexVolumeId).Bind(1, blockVolumeId).NonQueryAsync(cancellationToken);

    /// <inheritdoc/>
    public async ValueTask RemoveDuplicatePathsFromFilesetAsync(long filesetId, CancellationToken cancellationToken) =>
        await ExecuteAsync(
            """
            DELETE FROM "FilesetEntry" WHERE ("FilesetID", "FileID") IN (
                SELECT "FilesetID", "FileID" FROM (
                    SELECT "E"."FilesetID", "E"."FileID", ROW_NUMBER() OVER (PARTITION BY "F"."Path" ORDER BY "E"."FileID" DESC) AS "Rank"
                    FROM "FilesetEntry" "E" JOIN "File" "F" ON "E"."FileID" = "F"."ID"
                    WHERE "E"."FilesetID" = @FilesetId)
                WHERE "Rank" > 1)
            """,
            cancellationToken,
            ("@FilesetId", filesetId));

    private void PrepareBackupStatements()
    {
        _findBlock = Prepare("""SELECT "ID" FROM "Block" WHERE "Hash" = @Hash AND "Size" = @Size""", "@Hash", "@Size");
        _insertBlock = Prepare("""INSERT INTO "Block" ("Hash", "VolumeID", "Size") VALUES (@Hash, @VolumeId, @Size); SELECT last_insert_rowid();""", "@Hash", "@VolumeId", "@Size");
        _findBlockset = Prepare("""SELECT "ID" FROM "Blockset" WHERE "FullHash" = @Fullhash AND "Length" = @Length""", "@Fullhash", "@Length");
        _insertBlockset = Prepare("""INSERT INTO "Blockset" ("Length", "FullHash") VALUES (@Length, @Fullhash); SELECT last_insert_rowid();""", "@Length", "@Fullhash");
        _insertBlocklistHash = Prepare("""INSERT INTO "BlocklistHash" ("BlocksetID", "Index", "Hash") VALUES (@BlocksetId, @Index, @Hash)""", "@BlocksetId", "@Index", "@Hash");
        _insertBlocksetEntry = Prepare("""INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") SELECT @BlocksetId AS "A", @Index AS "B", "ID" FROM "Block" WHERE "Hash" = @Hash AND "Size" = @Size""", "@BlocksetId", "@Index", "@Hash", "@Size");
        _findMetadataset = Prepare("""SELECT "M"."ID" FROM "Metadataset" "M", "BlocksetEntry" "E", "Block" "B" WHERE "M"."BlocksetID" = "E"."BlocksetID" AND "E"."BlockID" = "B"."ID" AND "B"."Hash" = @Hash AND "B"."Size" = @Size""", "@Hash", "@Size");
        _insertMetadataset = Prepare("""INSERT INTO "Metadataset" ("BlocksetID", "Content") VALUES (@BlocksetId, @Content); SELECT last_insert_rowid();""", "@BlocksetId", "@Content");
        _findFileLookup = Prepare("""SELECT "ID" FROM "FileLookup" WHERE "BlocksetID" = @BlocksetId AND "MetadataID" = @MetadataId AND "Path" = @Path AND "PrefixID" = @PrefixId""", "@BlocksetId", "@MetadataId", "@Path", "@PrefixId");
        _insertFileLookup = Prepare("""INSERT INTO "FileLookup" ("PrefixID", "Path", "BlocksetID", "MetadataID") VALUES (@PrefixId, @Path, @BlocksetId, @MetadataId); SELECT last_insert_rowid();""", "@PrefixId", "@Path", "@BlocksetId", "@MetadataId");
        _insertFilesetEntry = Prepare("""INSERT INTO "FilesetEntry" ("FilesetID", "FileID", "Lastmodified") VALUES (@FilesetId, @FileId, @LastModified)""", "@FilesetId", "@FileId", "@LastModified");

        // The previous fileset's entry for a path: the FileLookup rows of the path first (CROSS JOIN keeps that order,
        // as Duplicati's query does), then its FilesetEntry in that fileset, its blockset and its metadata's blockset.
        _findFile = Prepare(
            """
            SELECT "L"."ID", "E"."Lastmodified", "D"."Length", "MB"."FullHash", "MB"."Length"
            FROM (SELECT "ID", "BlocksetID", "MetadataID" FROM "FileLookup" WHERE "PrefixID" = @PrefixId AND "Path" = @Path) "L"
            CROSS JOIN "FilesetEntry" "E", "Blockset" "D", "Metadataset" "M", "Blockset" "MB"
            WHERE "E"."FileID" = "L"."ID" AND "E"."FilesetID" = @FilesetId AND "D"."ID" = "L"."BlocksetID" AND "M"."ID" = "L"."MetadataID" AND "MB"."ID" = "M"."BlocksetID"
            LIMIT 1
            """,
            "@PrefixId", "@Path", "@FilesetId");
        _fileHash = Prepare("""SELECT "B"."FullHash" FROM "Blockset" "B", "FileLookup" "L" WHERE "B"."ID" = "L"."BlocksetID" AND "L"."ID" = @FileId""", "@FileId");
        _blocklistHashKnown = Prepare(
            """
            SELECT MIN("FilesetID") FROM "FilesetEntry" WHERE "FileID" IN (
                SELECT "ID" FROM "File" WHERE "BlocksetID" IN (SELECT "BlocksetID" FROM "BlocklistHash" WHERE "Hash" = @Hash))
            """,
            "@Hash");
        _findPrefix = Prepare("""SELECT "ID" FROM "PathPrefix" WHERE "Prefix" = @Prefix""", "@Prefix");
        _insertPrefix = Prepare("""INSERT INTO "PathPrefix" ("Prefix") VALUES (@Prefix); SELECT last_insert_rowid();""", "@Prefix");
        _insertIndexBlockLink = Prepare("""INSERT INTO "IndexBlockLink" ("IndexVolumeID", "BlockVolumeID") VALUES (@IndexVolumeId, @BlockVolumeId)""", "@IndexVolumeId", "@BlockVolumeId");
    }

    /// <summary>
    /// The take-back cache of LBD 403-551: a TEMP table of the largest DeletedBlock ID per (Hash, Size) of volumes whose
    /// state is "not Deleted or Deleting". The states are bound as enum values, as Duplicati passes them, so
    /// Microsoft.Data.Sqlite binds their numbers and the text column never equals them: the filter keeps every volume
    /// (facts §4.6). No rows: off. At most the cache size: a dictionary, table dropped. More: the table with a unique
    /// index, looked up per missing block.
    /// </summary>
    private async ValueTask LoadDeletedBlocksAsync(long? configured, CancellationToken cancellationToken)
    {
        if (configured is not { } cacheSize && !long.TryParse(Environment.GetEnvironmentVariable("DUPLICATI_DELETEDBLOCKCACHESIZE"), out cacheSize))
        {
            cacheSize = 10000;
        }

        if (cacheSize < 0)
        {
            return;
        }

        var table = HexName("DeletedBlock-");
        await ExecuteAsync(
            $"""CREATE TEMPORARY TABLE "{table}" AS SELECT MAX("ID") AS "ID", "Hash", "Size" FROM "DeletedBlock" WHERE "VolumeID" IN (SELECT "ID" FROM "Remotevolume" WHERE "State" NOT IN (@States0, @States1)) GROUP BY "Hash", "Size" """,
            cancellationToken,
            ("@States0", DuplicatiVolumeState.Deleted),
            ("@States1", DuplicatiVolumeState.Deleting));
        var rows = await ScalarAsync($"""SELECT COUNT(*) FROM "{table}" """, cancellationToken);
        if (rows == 0)
        {
            await ExecuteAsync($"""DROP TABLE "{table}" """, cancellationToken);
            return;
        }

        if (rows <= cacheSize)
        {
            _deletedBlocks = new Dictionary<string, Dictionary<long, long>>(StringComparer.Ordinal);
            using (var command = Connection.CreateCommand())
            {
                command.Transaction = Transaction.Current;
                command.CommandText = $"""SELECT "ID", "Hash", "Size" FROM "{table}" """;
                await using var reader = await command.ExecuteReaderAsync(cancellationToken);
                while (await reader.ReadAsync(cancellationToken))
                {
                    var hash = reader.GetString(1);
                    if (!_deletedBlocks.TryGetValue(hash, out var sizes))
                    {
                        _deletedBlocks[hash] = sizes = [];
                    }

                    sizes[reader.GetInt64(2)] = reader.GetInt64(0);
                }
            }

            await ExecuteAsync($"""DROP TABLE "{table}" """, cancellationToken);
        }
        else
        {
            await ExecuteAsync($"""CREATE UNIQUE INDEX "unique_{table}" ON "{table}" ("Hash", "Size")""", cancellationToken);
            _findInDeleted = Prepare($"""SELECT "ID" FROM "{table}" WHERE "Hash" = @Hash AND "Size" = @Size""", "@Hash", "@Size");
        }

        _moveFromDeleted = Prepare(
            """INSERT INTO "Block" ("Hash", "Size", "VolumeID") SELECT "Hash", "Size", "VolumeID" FROM "DeletedBlock" WHERE "ID" = @DeletedBlockId LIMIT 1; DELETE FROM "DeletedBlock" WHERE "ID" = @DeletedBlockId; SELECT last_insert_rowid();""",
            "@DeletedBlockId");
    }
}
