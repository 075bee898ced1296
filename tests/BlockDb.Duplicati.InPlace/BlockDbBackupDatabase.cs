using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.MicrosoftData;
using Microsoft.Data.Sqlite;

namespace BlockDb.Duplicati.InPlace;

/// <summary>
/// The backup replay's seam (<see cref="IDuplicatiBackupDatabase"/>) with BlockDb doing the block index inside
/// Duplicati's own transaction (plan §5.1): blocks, blocksets (with their BlocklistHash rows) and Blocks volumes go
/// through one BlockDb session on the caller's connection (<see cref="BlockDatabaseBuilder.UseCallerConnection"/> over
/// <see cref="MicrosoftDataDriver.Borrow"/>); everything else (Configuration, filesets, metadata, paths, files, Files
/// and Index volumes, volume updates with their hash, the log) is Duplicati's own statements
/// (<see cref="DuplicatiBackupStatements"/>) on the same connection and transaction. Commits stay Duplicati's: BlockDb
/// never commits, so its rows become durable with the engine's at Duplicati's commit points.
/// With a provider (<see cref="OpenFileAsync"/>), BlockDb works on its own connection of that provider instead, as a
/// standalone database beside Duplicati's: then Duplicati's transaction is committed before each BlockDb call (so BlockDb
/// sees Duplicati's rows and does not wait for its write lock) and BlockDb commits each call (so Duplicati's next
/// statement sees BlockDb's rows). The rows are the same; only the commit points differ.
/// </summary>
public sealed class BlockDbBackupDatabase : IDuplicatiBackupDatabase
{
    private readonly DuplicatiBackupStatements _duplicati;
    private readonly List<BlockKey> _keys = [];
    private IBlockDatabase? _database;
    private readonly string? _provider;
    private IBlockSession? _session;

    private BlockDbBackupDatabase(DuplicatiBackupStatements duplicati, string? provider)
    {
        _duplicati = duplicati;
        _provider = provider;
    }

    /// <summary>BlockDb's database on the caller's connection once the backup reached its first block call (to run <see cref="IBlockDatabase.CheckAsync"/> inside its transaction, say), else null.</summary>
    public IBlockDatabase? Database => _database;

    /// <summary>Duplicati's own statements this object delegates to, on the same connection and transaction.</summary>
    public DuplicatiBackupStatements Duplicati => _duplicati;

    /// <inheritdoc/>
    public long OperationId => _duplicati.OperationId;

    /// <summary>
    /// Opens Duplicati's backup object on <paramref name="connection"/> (its always-open transaction, its Operation row).
    /// BlockDb is opened inside that transaction at the first call it serves: a new file's <c>Configuration</c> (block
    /// size, hashes) is written by the backup's first steps, and BlockDb reads it when it opens.
    /// </summary>
    /// <param name="connection">An open connection with no transaction, opened as Duplicati opens it (<see cref="DuplicatiConnection.Open"/>).</param>
    /// <param name="operationTimeUtc">The backup's time.</param>
    /// <param name="ownsConnection">Whether disposing this object closes the connection.</param>
    /// <param name="cancellationToken">Cancels the setup.</param>
    /// <returns>The object; dispose it (BlockDb first, then Duplicati's object, which rolls back what is not committed).</returns>
    public static Task<BlockDbBackupDatabase> OpenAsync(SqliteConnection connection, DateTime operationTimeUtc, bool ownsConnection, CancellationToken cancellationToken = default) =>
        OpenCoreAsync(connection, operationTimeUtc, ownsConnection, provider: null, cancellationToken);

    /// <summary>Opens the file as Duplicati does (<see cref="DuplicatiConnection.Open"/>) and this object on it; disposing it closes the file.</summary>
    /// <param name="path">The Duplicati file.</param>
    /// <param name="operationTimeUtc">The backup's time.</param>
    /// <param name="provider">Null: BlockDb inside Duplicati's transaction. A SQLite provider's name: BlockDb on its own connection of that provider (see the class remarks).</param>
    /// <param name="cancellationToken">Cancels the setup.</param>
    public static async Task<IDuplicatiBackupDatabase> OpenFileAsync(string path, DateTime operationTimeUtc, string? provider = null, CancellationToken cancellationToken = default) =>
        await OpenCoreAsync(DuplicatiConnection.Open(path), operationTimeUtc, ownsConnection: true, provider, cancellationToken);

    private static async Task<BlockDbBackupDatabase> OpenCoreAsync(SqliteConnection connection, DateTime operationTimeUtc, bool ownsConnection, string? provider, CancellationToken cancellationToken) =>
        // Duplicati's take-back cache is off (-1): every block goes through BlockDb, which takes blocks back itself.
        new(await DuplicatiBackupStatements.OpenAsync(connection, operationTimeUtc, ownsConnection, deletedBlockCacheSize: -1, cancellationToken), provider);

    /// <inheritdoc/>
    public ValueTask CommitAsync(string reason, CancellationToken cancellationToken) => _duplicati.CommitAsync(reason, cancellationToken);

    /// <inheritdoc/>
    public async ValueTask<long> RegisterRemoteVolumeAsync(string name, DuplicatiVolumeType type, DuplicatiVolumeState state, CancellationToken cancellationToken) =>
        type == DuplicatiVolumeType.Blocks
            ? await (await SessionAsync(cancellationToken)).RegisterVolumeAsync(name, ToBlockDb(state), cancellationToken)
            : await _duplicati.RegisterRemoteVolumeAsync(name, type, state, cancellationToken);

    /// <inheritdoc/>
    public ValueTask UpdateRemoteVolumeAsync(string name, DuplicatiVolumeState state, long size, string? hash, TimeSpan deleteGrace, CancellationToken cancellationToken) =>
        _duplicati.UpdateRemoteVolumeAsync(name, state, size, hash, deleteGrace, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<long> GetRemoteVolumeIdAsync(string name, CancellationToken cancellationToken) => _duplicati.GetRemoteVolumeIdAsync(name, cancellationToken);

    /// <inheritdoc/>
    public ValueTask RemoveRemoteVolumesAsync(IReadOnlyList<string> names, CancellationToken cancellationToken) => _duplicati.RemoveRemoteVolumesAsync(names, cancellationToken);

    /// <inheritdoc/>
    public ValueTask LogRemoteOperationAsync(string operation, string path, string? data, CancellationToken cancellationToken) => _duplicati.LogRemoteOperationAsync(operation, path, data, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<IReadOnlyDictionary<string, string>> GetConfigurationAsync(CancellationToken cancellationToken) => _duplicati.GetConfigurationAsync(cancellationToken);

    /// <inheritdoc/>
    public ValueTask SetConfigurationAsync(IReadOnlyDictionary<string, string> rows, CancellationToken cancellationToken) => _duplicati.SetConfigurationAsync(rows, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<long> CountBlocksLargerThanAsync(long blocksize, CancellationToken cancellationToken) => _duplicati.CountBlocksLargerThanAsync(blocksize, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<(long Id, DateTime TimeUtc)?> GetLastFilesetAsync(CancellationToken cancellationToken) => _duplicati.GetLastFilesetAsync(cancellationToken);

    /// <inheritdoc/>
    public ValueTask<long> CreateFilesetAsync(long volumeId, DateTime timestampUtc, CancellationToken cancellationToken) => _duplicati.CreateFilesetAsync(volumeId, timestampUtc, cancellationToken);

    /// <inheritdoc/>
    public ValueTask UpdateFullBackupStateAsync(long filesetId, bool isFullBackup, CancellationToken cancellationToken) => _duplicati.UpdateFullBackupStateAsync(filesetId, isFullBackup, cancellationToken);

    /// <inheritdoc/>
    public async ValueTask<long> FindBlockIdAsync(string hash, long size, CancellationToken cancellationToken) =>
        await (await SessionAsync(cancellationToken)).FindBlockAsync(BlockKey.Parse(hash, size), cancellationToken) ?? -1;

    /// <inheritdoc/>
    public async ValueTask<bool> AddBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken) =>
        (await (await SessionAsync(cancellationToken)).SelectXorInsertAsync(BlockKey.Parse(hash, size), volumeId, cancellationToken)).Created;

    /// <inheritdoc/>
    public ValueTask<bool> IsBlocklistHashKnownAsync(string hash, CancellationToken cancellationToken) => _duplicati.IsBlocklistHashKnownAsync(hash, cancellationToken);

    /// <inheritdoc/>
    /// <remarks>
    /// Duplicati's first statement (find by FullHash and Length) gives <c>Created</c>; BlockDb then adds the blockset from
    /// the block keys with their positional sizes and computes the BlocklistHash rows itself (they must equal
    /// <paramref name="blocklistHashes"/>, which the replay cut as Duplicati's splitter does; the tests compare the rows),
    /// and Duplicati commits at its "AddBlockset" point.
    /// </remarks>
    public async ValueTask<(bool Created, long Id)> AddBlocksetAsync(string fullHash, long length, int blocksize, IReadOnlyList<string> blockHashes, IReadOnlyList<string> blocklistHashes, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(blockHashes);
        var session = await SessionAsync(cancellationToken);
        if (await session.FindBlocksetAsync(BlockHash.Parse(fullHash), length, cancellationToken) is { } found)
        {
            return (false, found);
        }

        _keys.Clear();
        var remaining = length;
        foreach (var hash in blockHashes)
        {
            _keys.Add(BlockKey.Parse(hash, Math.Min(remaining, blocksize)));
            remaining -= blocksize;
        }

        // Duplicati's AddBlockset names blocks its splitter recorded just before, each in a volume: the call finds them all,
        // and the Duplicati layout wants a volume for any block it could create, so it gets theirs.
        long? volume = null;
        if (_keys.Count > 0 && await session.FindBlockAsync(_keys[0], cancellationToken) is { } first)
        {
            volume = (await session.GetBlockAsync(first, cancellationToken)).VolumeId;
        }

        var id = await session.AddBlocksetAsync(_keys.ToArray(), new SelectXorInsertResult[_keys.Count], BlockHash.Parse(fullHash), volume, cancellationToken);
        await _duplicati.CommitAsync("AddBlockset", cancellationToken);
        return (true, id);
    }

    /// <inheritdoc/>
    public ValueTask<(bool Found, long Id)> GetMetadatasetIdAsync(string hash, long size, CancellationToken cancellationToken) => _duplicati.GetMetadatasetIdAsync(hash, size, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<(bool Created, long Id)> AddMetadatasetAsync(string hash, long size, long blocksetId, string? content, CancellationToken cancellationToken) => _duplicati.AddMetadatasetAsync(hash, size, blocksetId, content, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<long> GetOrCreatePathPrefixAsync(string prefix, CancellationToken cancellationToken) => _duplicati.GetOrCreatePathPrefixAsync(prefix, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<PreviousFileEntry?> GetFileEntryAsync(long prefixId, string name, long filesetId, CancellationToken cancellationToken) => _duplicati.GetFileEntryAsync(prefixId, name, filesetId, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<string?> GetFileHashAsync(long fileId, CancellationToken cancellationToken) => _duplicati.GetFileHashAsync(fileId, cancellationToken);

    /// <inheritdoc/>
    public ValueTask AddFileAsync(long prefixId, string name, DateTime lastModifiedUtc, long blocksetId, long metadataId, CancellationToken cancellationToken) => _duplicati.AddFileAsync(prefixId, name, lastModifiedUtc, blocksetId, metadataId, cancellationToken);

    /// <inheritdoc/>
    public ValueTask AddUnmodifiedAsync(long fileId, DateTime lastModifiedUtc, CancellationToken cancellationToken) => _duplicati.AddUnmodifiedAsync(fileId, lastModifiedUtc, cancellationToken);

    /// <inheritdoc/>
    public ValueTask AddIndexBlockLinkAsync(long indexVolumeId, long blockVolumeId, CancellationToken cancellationToken) => _duplicati.AddIndexBlockLinkAsync(indexVolumeId, blockVolumeId, cancellationToken);

    /// <inheritdoc/>
    public ValueTask RemoveDuplicatePathsFromFilesetAsync(long filesetId, CancellationToken cancellationToken) => _duplicati.RemoveDuplicatePathsFromFilesetAsync(filesetId, cancellationToken);

    /// <summary>Disposes BlockDb (its statements; never the connection), then Duplicati's object (rolls back what is not committed; closes the connection when owned).</summary>
    public async ValueTask DisposeAsync()
    {
        try
        {
            if (_session is not null)
            {
                await _session.DisposeAsync();
            }

            if (_database is not null)
            {
                await _database.DisposeAsync();
            }
        }
        finally
        {
            await _duplicati.DisposeAsync();
        }
    }

    /// <summary>The BlockDb session for the next call, opened at the first (on its own connection: after Duplicati's rows so far are committed).</summary>
    private async ValueTask<IBlockSession> SessionAsync(CancellationToken cancellationToken)
    {
        if (_provider is null)
        {
            return _session ??= await OpenBlockDbAsync(cancellationToken);
        }

        await _duplicati.CommitAsync("BlockDb", cancellationToken);
        return _session ??= await OpenBlockDbAsync(cancellationToken);
    }

    private async ValueTask<IBlockSession> OpenBlockDbAsync(CancellationToken cancellationToken)
    {
        _database ??= _provider is null
            ? new BlockDatabaseBuilder(new BlockDbOptions()).UseCallerConnection(MicrosoftDataDriver.Instance.Borrow(_duplicati.Connection)).Build()
            : BlockDatabase.Open(new BlockDbOptions { Provider = _provider, DataSource = _duplicati.Connection.DataSource, Batching = { CommitEvery = 1, ReadsPerTransaction = 1 } });
        return await _database.OpenSessionAsync(cancellationToken);
    }

    private static VolumeState ToBlockDb(DuplicatiVolumeState state) =>
        Enum.Parse<VolumeState>(state.ToString(), ignoreCase: false);
}
