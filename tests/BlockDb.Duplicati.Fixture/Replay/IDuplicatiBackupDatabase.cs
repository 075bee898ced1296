namespace BlockDb.Duplicati.Fixture.Replay;

/// <summary>What the previous fileset recorded for a path (Duplicati's <c>GetFileEntryAsync</c>, LBD 1157).</summary>
/// <param name="FileId">The <c>FileLookup.ID</c>.</param>
/// <param name="LastModified">The recorded last write time (UTC).</param>
/// <param name="Length">The file's blockset length in bytes.</param>
/// <param name="MetadataHash">The metadata blockset's FullHash.</param>
/// <param name="MetadataLength">The metadata blockset's length in bytes.</param>
public sealed record PreviousFileEntry(long FileId, DateTime LastModified, long Length, string MetadataHash, long MetadataLength);

/// <summary>
/// The operations every Duplicati local-database object offers (<c>LocalDatabase</c>): the operation it belongs to,
/// its always-open transaction's commit, remote volumes and the remote-operation log. One call = one method of
/// Duplicati's; the replay calls them in Duplicati's order.
/// </summary>
public interface IDuplicatiDatabase : IAsyncDisposable
{
    /// <summary>The <c>Operation.ID</c> this object inserted when it was opened.</summary>
    long OperationId { get; }

    /// <summary>Commits the open transaction and begins the next one (Duplicati's <c>ReusableTransaction.CommitAsync</c>).</summary>
    /// <param name="reason">Duplicati's name for the commit point.</param>
    /// <param name="cancellationToken">Cancels before the commit.</param>
    ValueTask CommitAsync(string reason, CancellationToken cancellationToken);

    /// <summary><c>RegisterRemoteVolumeAsync</c> (LD 1442-1504): a new <c>Remotevolume</c> row, Size −1, no Hash, counters 0.</summary>
    /// <returns>The new volume's ID.</returns>
    ValueTask<long> RegisterRemoteVolumeAsync(string name, DuplicatiVolumeType type, DuplicatiVolumeState state, CancellationToken cancellationToken);

    /// <summary><c>UpdateRemoteVolumeAsync</c> (LD 656-689): OperationID, State, Hash and Size by Name (exactly one row), and <c>DeleteGraceTime</c> = now + grace in epoch seconds when a grace is given.</summary>
    ValueTask UpdateRemoteVolumeAsync(string name, DuplicatiVolumeState state, long size, string? hash, TimeSpan deleteGrace, CancellationToken cancellationToken);

    /// <summary><c>GetRemoteVolumeIDAsync</c>: the ID of the volume named so, or −1.</summary>
    ValueTask<long> GetRemoteVolumeIdAsync(string name, CancellationToken cancellationToken);

    /// <summary>
    /// <c>RemoveRemoteVolumesAsync</c> (LD 1018-1376), for volumes deleted remotely or a block volume a backup left
    /// empty: the rows that depend on them (blocksets using their blocks, filesets stored in them, their blocks and
    /// deleted blocks, index links), then each volume row whose delete grace has passed or whose state is not
    /// <c>Deleted</c>.
    /// </summary>
    ValueTask RemoveRemoteVolumesAsync(IReadOnlyList<string> names, CancellationToken cancellationToken);

    /// <summary><c>LogRemoteOperationAsync</c> (LD 938): a <c>RemoteOperation</c> row.</summary>
    ValueTask LogRemoteOperationAsync(string operation, string path, string? data, CancellationToken cancellationToken);
}

/// <summary>
/// The seam of the backup replay: the calls Duplicati's backup makes on its <c>LocalBackupDatabase</c>
/// (<c>Duplicati/Library/Main/Database/Local/LocalBackupDatabase.cs</c>) and <c>LocalDatabase</c>, in the order
/// <see cref="DuplicatiBackupReplay"/> makes them. <see cref="DuplicatiBackupStatements"/> runs Duplicati's own
/// statements; an in-place BlockDb implementation does the same backup on the same file by implementing this interface
/// (delegating what it does not own to a <see cref="DuplicatiBackupStatements"/> on the same connection and
/// transaction), so both can be measured side by side.
/// </summary>
public interface IDuplicatiBackupDatabase : IDuplicatiDatabase
{
    /// <summary>Every <c>Configuration</c> row (<c>GetDbOptionsAsync</c>).</summary>
    ValueTask<IReadOnlyDictionary<string, string>> GetConfigurationAsync(CancellationToken cancellationToken);

    /// <summary>Replaces every <c>Configuration</c> row (<c>SetDbOptionsAsync</c>: delete all, insert all).</summary>
    ValueTask SetConfigurationAsync(IReadOnlyDictionary<string, string> rows, CancellationToken cancellationToken);

    /// <summary><c>GetBlocksLargerThanAsync</c> (LD 1774-1787): how many blocks are larger than <paramref name="blocksize"/>.</summary>
    ValueTask<long> CountBlocksLargerThanAsync(long blocksize, CancellationToken cancellationToken);

    /// <summary>The newest fileset (<c>FilesetTimesAsync().First()</c>), or null when there is none.</summary>
    ValueTask<(long Id, DateTime TimeUtc)?> GetLastFilesetAsync(CancellationToken cancellationToken);

    /// <summary><c>CreateFilesetAsync</c> (LD 2931-2960): a <c>Fileset</c> row (IsFullBackup 0, Timestamp in epoch seconds); the current fileset from now on.</summary>
    /// <returns>The fileset ID.</returns>
    ValueTask<long> CreateFilesetAsync(long volumeId, DateTime timestampUtc, CancellationToken cancellationToken);

    /// <summary><c>UpdateFullBackupStateInFilesetAsync</c> (LD 3088).</summary>
    ValueTask UpdateFullBackupStateAsync(long filesetId, bool isFullBackup, CancellationToken cancellationToken);

    /// <summary><c>FindBlockIDAsync</c> (LBD 745): the block's ID, or −1.</summary>
    ValueTask<long> FindBlockIdAsync(string hash, long size, CancellationToken cancellationToken);

    /// <summary><c>AddBlockAsync</c> (LBD 763-832): find; on a miss take it back from <c>DeletedBlock</c> where Duplicati would, else insert it into <paramref name="volumeId"/>.</summary>
    /// <returns>True when the block is new and its data goes into the current volume.</returns>
    ValueTask<bool> AddBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken);

    /// <summary><c>IsBlocklistHashKnownAsync</c> (LBD 2020): whether a blocklist block already went into an index volume.</summary>
    ValueTask<bool> IsBlocklistHashKnownAsync(string hash, CancellationToken cancellationToken);

    /// <summary><c>AddBlocksetAsync</c> (LBD 845-940): find by FullHash and Length; else the Blockset row, its BlocklistHash rows and one entry per block, then commit.</summary>
    /// <param name="fullHash">The file hash (base64).</param>
    /// <param name="length">Bytes.</param>
    /// <param name="blocksize">The block size: entry <c>i</c> is looked up with size <c>min(blocksize, length − i·blocksize)</c>.</param>
    /// <param name="blockHashes">The block hashes in order.</param>
    /// <param name="blocklistHashes">The blocklist hashes in order (none for 0 or 1 blocks).</param>
    /// <param name="cancellationToken">Cancels before the next statement.</param>
    /// <returns>Whether the blockset was created, and its ID.</returns>
    ValueTask<(bool Created, long Id)> AddBlocksetAsync(string fullHash, long length, int blocksize, IReadOnlyList<string> blockHashes, IReadOnlyList<string> blocklistHashes, CancellationToken cancellationToken);

    /// <summary><c>GetMetadatasetIDAsync</c> (LBD 949-967): a Metadataset whose blockset holds the block (hash, size); (false, −2) for size ≤ 0.</summary>
    ValueTask<(bool Found, long Id)> GetMetadatasetIdAsync(string hash, long size, CancellationToken cancellationToken);

    /// <summary><c>AddMetadatasetAsync</c> (LBD 978-995): look up; else insert <c>Metadataset(BlocksetID, Content)</c> and commit.</summary>
    ValueTask<(bool Created, long Id)> AddMetadatasetAsync(string hash, long size, long blocksetId, string? content, CancellationToken cancellationToken);

    /// <summary><c>GetOrCreatePathPrefixAsync</c> (LD 3520-3549): a 5-entry ring cache, then select or insert.</summary>
    ValueTask<long> GetOrCreatePathPrefixAsync(string prefix, CancellationToken cancellationToken);

    /// <summary><c>GetFileEntryAsync</c> (LBD 1157): what fileset <paramref name="filesetId"/> recorded for the path, or null.</summary>
    ValueTask<PreviousFileEntry?> GetFileEntryAsync(long prefixId, string name, long filesetId, CancellationToken cancellationToken);

    /// <summary><c>GetFileHashAsync</c> (LBD 1231): the FullHash of a FileLookup row's blockset, or null.</summary>
    ValueTask<string?> GetFileHashAsync(long fileId, CancellationToken cancellationToken);

    /// <summary><c>AddFileAsync</c> (LBD 1007-1032): find or insert (and commit) the FileLookup row, then a FilesetEntry.</summary>
    ValueTask AddFileAsync(long prefixId, string name, DateTime lastModifiedUtc, long blocksetId, long metadataId, CancellationToken cancellationToken);

    /// <summary><c>AddKnownFileAsync</c> (LBD 1065-1074): a FilesetEntry for an existing FileLookup row; no commit.</summary>
    ValueTask AddUnmodifiedAsync(long fileId, DateTime lastModifiedUtc, CancellationToken cancellationToken);

    /// <summary><c>AddIndexBlockLinkAsync</c>: an <c>IndexBlockLink</c> row.</summary>
    ValueTask AddIndexBlockLinkAsync(long indexVolumeId, long blockVolumeId, CancellationToken cancellationToken);

    /// <summary><c>RemoveDuplicatePathsFromFilesetAsync</c> (LBD 2040): the fileset keeps one entry per path, the highest FileID.</summary>
    ValueTask RemoveDuplicatePathsFromFilesetAsync(long filesetId, CancellationToken cancellationToken);
}

/// <summary>The calls of Duplicati's delete (<c>LocalDeleteDatabase</c>, <c>DeleteHandler</c>) the replay makes.</summary>
public interface IDuplicatiDeleteDatabase : IDuplicatiDatabase
{
    /// <summary>
    /// <c>DropFilesetsFromTableAsync</c> (LDD 123-294): the filesets with these timestamps and every row only they
    /// needed; blocks no BlocksetEntry names and whose hash no BlocklistHash names move to <c>DeletedBlock</c>; the
    /// Files volumes no fileset names become <c>Deleting</c>.
    /// </summary>
    /// <returns>Name and size of every Files volume now in state <c>Deleting</c>.</returns>
    ValueTask<IReadOnlyList<(string Name, long Size)>> DropFilesetsFromTableAsync(IReadOnlyList<DateTime> timestampsUtc, CancellationToken cancellationToken);
}
