using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using BlockDb.Duplicati.Fixture.Source;

namespace BlockDb.Duplicati.Fixture.Replay;

/// <summary>What one replayed backup did.</summary>
/// <param name="FilesetId">The new fileset's ID.</param>
/// <param name="FilesetTimeUtc">The new fileset's time (its <c>Timestamp</c>, whole seconds).</param>
/// <param name="Entries">Source entries handled: folders, files, links.</param>
/// <param name="Files">Regular files examined.</param>
/// <param name="FilesRead">Files whose content was read (new, or something changed).</param>
/// <param name="FilesUnchanged">Files recorded from the previous fileset without reading them.</param>
/// <param name="DataBlocks">Data blocks of the files read (duplicates included, blocklist and metadata blocks not).</param>
/// <param name="NewBlocks">Block rows the backup added (data, metadata and blocklist blocks).</param>
/// <param name="BlocklistBlocks">Blocklist blocks emitted.</param>
/// <param name="BlocksetsCreated">Blockset rows added (data and metadata).</param>
/// <param name="BlockVolumes">Block volumes registered.</param>
/// <param name="Elapsed">Wall time of the replay.</param>
public sealed record BackupReplayResult(
    long FilesetId,
    DateTime FilesetTimeUtc,
    long Entries,
    long Files,
    long FilesRead,
    long FilesUnchanged,
    long DataBlocks,
    long NewBlocks,
    long BlocklistBlocks,
    long BlocksetsCreated,
    long BlockVolumes,
    TimeSpan Elapsed);

/// <summary>
/// Duplicati's statement sequence for a backup and for a delete, driven from a <see cref="SyntheticBackupSource"/> over
/// the <see cref="IDuplicatiBackupDatabase"/> / <see cref="IDuplicatiDeleteDatabase"/> seam (facts §4, §5, §6.1, §6.4).
/// It plays one block processor and one file processor: per entry, the prefix and the previous fileset's entry; an
/// unchanged file is a FilesetEntry only; otherwise metadata (a blockset and a Metadataset), then the data split into
/// <c>blocksize</c> blocks, each block and each blocklist block through <c>AddBlockAsync</c> into the block volume
/// being filled (opened lazily, after a probe, as <c>DataBlockProcessor</c> does), then the blockset and the file row.
/// A full volume goes <c>Uploading</c>, gets its index volume and link, commits and "uploads" (the backend's state
/// updates and log rows, each flushed with a commit). At the end: the last volume, the fileset marked full, the dlist
/// volume uploaded, duplicate paths removed, this run's volumes <c>Verified</c>.
/// Not replayed (reads that write nothing): the consistency checks before and after, <c>PRAGMA optimize</c>, the
/// dlist's file listing, the change statistics and the missing-index-file query.
/// </summary>
public sealed class DuplicatiBackupReplay
{
    private readonly DuplicatiConfiguration _configuration;
    private readonly bool _storeMetadataContent;

    /// <summary>A replay for files of these options.</summary>
    /// <param name="configuration">The backup's options (block size, hashes, volume size); the first backup writes them to Configuration.</param>
    /// <param name="storeMetadataContent">Duplicati's <c>--store-metadata-content-in-database</c> (default false): Metadataset.Content holds the metadata JSON.</param>
    public DuplicatiBackupReplay(DuplicatiConfiguration configuration, bool storeMetadataContent = false)
    {
        _configuration = configuration ?? throw new ArgumentNullException(nameof(configuration));
        _storeMetadataContent = storeMetadataContent;
        _ = _configuration.HashSize;
        ArgumentOutOfRangeException.ThrowIfLessThan(_configuration.Blocksize, DuplicatiConstants.MinimumBlocksize);
    }

    /// <summary>The options.</summary>
    public DuplicatiConfiguration Configuration => _configuration;

    /// <summary>Opens the file as Duplicati does, replays one backup of <paramref name="source"/> with Duplicati's own statements, closes it.</summary>
    /// <param name="path">A Duplicati v19 file (e.g. made by <see cref="DuplicatiSchema.CreateFile"/>).</param>
    /// <param name="source">The source version to back up; its block size must be the configuration's.</param>
    /// <param name="configuration">The backup's options.</param>
    /// <param name="cancellationToken">Cancels between statements; what is not committed is rolled back.</param>
    /// <returns>What the backup did.</returns>
    public static async Task<BackupReplayResult> RunBackupAsync(string path, SyntheticBackupSource source, DuplicatiConfiguration configuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        await using var db = await DuplicatiBackupStatements.OpenAsync(DuplicatiConnection.Open(path), source.TimeUtc, ownsConnection: true, cancellationToken: cancellationToken);
        return await new DuplicatiBackupReplay(configuration).BackupAsync(db, source, cancellationToken);
    }

    /// <summary>Opens the file as Duplicati does and replays Duplicati's delete of the filesets with these times, closes it.</summary>
    /// <param name="path">A Duplicati v19 file.</param>
    /// <param name="filesetTimesUtc">The filesets' times (their <c>Timestamp</c>).</param>
    /// <param name="deleteTimeUtc">The delete operation's time.</param>
    /// <param name="cancellationToken">Cancels between statements.</param>
    /// <returns>The names of the Files volumes deleted.</returns>
    public static async Task<IReadOnlyList<string>> RunDeleteAsync(string path, IReadOnlyList<DateTime> filesetTimesUtc, DateTime deleteTimeUtc, CancellationToken cancellationToken = default)
    {
        await using var db = await DuplicatiDeleteStatements.OpenAsync(DuplicatiConnection.Open(path), deleteTimeUtc, ownsConnection: true, cancellationToken);
        return await DeleteAsync(db, filesetTimesUtc, cancellationToken);
    }

    /// <summary>
    /// Duplicati's delete (<c>DeleteHandler</c>): drop the filesets and what only they used (unreferenced blocks move to
    /// DeletedBlock), their Files volumes <c>Deleting</c>, commit; then for each volume the backend's delete: a log
    /// row, <c>Deleted</c> with a 2-hour grace, <c>RemoveRemoteVolumesAsync</c>, commit. No compact.
    /// </summary>
    /// <param name="db">The delete's database object.</param>
    /// <param name="filesetTimesUtc">The filesets' times.</param>
    /// <param name="cancellationToken">Cancels between statements.</param>
    /// <returns>The names of the Files volumes deleted.</returns>
    public static async Task<IReadOnlyList<string>> DeleteAsync(IDuplicatiDeleteDatabase db, IReadOnlyList<DateTime> filesetTimesUtc, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(db);
        var volumes = await db.DropFilesetsFromTableAsync(filesetTimesUtc, cancellationToken);
        foreach (var (name, size) in volumes)
        {
            await db.UpdateRemoteVolumeAsync(name, DuplicatiVolumeState.Deleting, size, null, TimeSpan.Zero, cancellationToken);
        }

        await db.CommitAsync("CommitBeforeDelete", cancellationToken);
        foreach (var (name, size) in volumes)
        {
            await db.LogRemoteOperationAsync("delete", name, null, cancellationToken);
            await db.UpdateRemoteVolumeAsync(name, DuplicatiVolumeState.Deleted, size, null, DuplicatiConstants.DeletedVolumeGrace, cancellationToken);
            await db.RemoveRemoteVolumesAsync([name], cancellationToken);
            await db.CommitAsync("FlushBackendMessagesAndCommit", cancellationToken);
        }

        return [.. volumes.Select(v => v.Name)];
    }

    /// <summary>Replays one backup of <paramref name="source"/> on <paramref name="db"/> (see the class remarks for the sequence).</summary>
    /// <param name="db">The backup's database object: Duplicati's statements, or another implementation of the seam.</param>
    /// <param name="source">The source version; its block size must be the configuration's.</param>
    /// <param name="cancellationToken">Cancels between statements.</param>
    /// <returns>What the backup did.</returns>
    /// <exception cref="InvalidOperationException">The file's Configuration holds another block size or hash, holds blocks larger than the block size, or has a newer fileset.</exception>
    public async Task<BackupReplayResult> BackupAsync(IDuplicatiBackupDatabase db, SyntheticBackupSource source, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(db);
        ArgumentNullException.ThrowIfNull(source);
        if (source.Blocksize != _configuration.Blocksize)
        {
            throw new ArgumentException($"The source is cut into {source.Blocksize}-byte blocks, the configuration says {_configuration.Blocksize}.", nameof(source));
        }

        var clock = Stopwatch.StartNew();
        var run = new Run(this, db, source.TimeUtc, cancellationToken);
        await run.VerifyOptionsAsync();
        var (filesetId, filesetTime, dlist) = await run.CreateFilesetAsync();
        foreach (var entry in source.Entries())
        {
            await run.EntryAsync(entry);
        }

        await run.FinishAsync(filesetId, dlist);
        return run.Result(filesetId, filesetTime, clock.Elapsed);
    }

    /// <summary>Splits a path at its last separator, ignoring trailing ones; the prefix keeps its separator (LD 3564-3574).</summary>
    internal static (string Prefix, string Name) Split(string path)
    {
        var last = path.TrimEnd('/', '\\').LastIndexOfAny(['/', '\\']);
        return last >= 0 ? (path[..(last + 1)], path[(last + 1)..]) : (string.Empty, path);
    }

    /// <summary>The state of one backup: the block volume being filled, the previous fileset, counters.</summary>
    private sealed class Run
    {
        private readonly DuplicatiBackupReplay _replay;
        private readonly IDuplicatiBackupDatabase _db;
        private readonly DuplicatiConfiguration _cfg;
        private readonly DateTime _time;
        private readonly CancellationToken _ct;
        private readonly byte[] _blocklist;
        private readonly byte[] _hash = new byte[64];
        private readonly byte[] _blocklistHash = new byte[64];
        private readonly byte[] _blockBytes = new byte[SourceContent.BlockBytesLength];
        private readonly List<(string Name, long Size, string Hash)> _uploaded = [];
        private Volume? _volume;
        private long _previousFilesetId = -1;
        private string? _previousPrefix;
        private long _previousPrefixId = -1;
        private long _names;
        private long _entries, _files, _filesRead, _unchanged, _dataBlocks, _newBlocks, _blocklistBlocks, _blocksets, _volumes;

        public Run(DuplicatiBackupReplay replay, IDuplicatiBackupDatabase db, DateTime time, CancellationToken ct)
        {
            _replay = replay;
            _db = db;
            _cfg = replay._configuration;
            _time = time;
            _ct = ct;
            _blocklist = new byte[_cfg.Blocksize];
        }

        /// <summary><c>Utility.VerifyOptionsAndUpdateDatabaseAsync</c>: a changed persisted option or a block larger than the block size refuses the backup; a missing key writes them all.</summary>
        public async ValueTask VerifyOptionsAsync()
        {
            var stored = await _db.GetConfigurationAsync(_ct);
            var wanted = _cfg.Rows();
            var update = false;
            foreach (var (key, value) in wanted)
            {
                if (!stored.TryGetValue(key, out var existing))
                {
                    update = true;
                }
                else if (existing != value)
                {
                    throw new InvalidOperationException($"You have attempted to change the parameter \"{key}\" from \"{existing}\" to \"{value}\", which is not supported. (ParameterChangeNotSupported)");
                }
            }

            if (await _db.CountBlocksLargerThanAsync(_cfg.Blocksize, _ct) > 0)
            {
                throw new InvalidOperationException("You have attempted to change the block-size on an existing backup, which is not supported. (BlockSizeChangeNotSupported)");
            }

            if (update)
            {
                var rows = stored.ToDictionary(r => r.Key, r => r.Value, StringComparer.Ordinal);
                foreach (var (key, value) in wanted)
                {
                    rows[key] = value;
                }

                await _db.SetConfigurationAsync(rows, _ct);
            }
        }

        /// <summary>The previous fileset, the dlist volume (Files, Temporary) and the Fileset row, committed (<c>BackupHandler</c> 668-700, <c>BackupDatabase.CreateFilesetAsync</c>).</summary>
        public async ValueTask<(long Id, DateTime Time, string Dlist)> CreateFilesetAsync()
        {
            var previous = await _db.GetLastFilesetAsync(_ct);
            if (previous is { } p)
            {
                if (p.TimeUtc > _time)
                {
                    throw new InvalidOperationException($"The previous backup has time {p.TimeUtc:u}, but this backup has time {_time:u}. Something is wrong with the clock.");
                }

                _previousFilesetId = p.Id;
            }

            var time = _time;
            var name = DlistName(time);
            for (var tries = 1; tries <= 100 && await _db.GetRemoteVolumeIdAsync(name, _ct) >= 0; tries++)
            {
                time = _time.AddSeconds(tries);
                name = DlistName(time);
            }

            if (await _db.GetRemoteVolumeIdAsync(name, _ct) >= 0)
            {
                throw new InvalidOperationException("Unable to generate a unique fileset name");
            }

            var volumeId = await _db.RegisterRemoteVolumeAsync(name, DuplicatiVolumeType.Files, DuplicatiVolumeState.Temporary, _ct);
            var id = await _db.CreateFilesetAsync(volumeId, time, _ct);
            await _db.CommitAsync("CreateFileset", _ct);
            return (id, new DateTime(time.Ticks - (time.Ticks % TimeSpan.TicksPerSecond), DateTimeKind.Utc), name);
        }

        public async ValueTask EntryAsync(SourceEntry entry)
        {
            _entries++;
            switch (entry.Kind)
            {
                case SourceEntryKind.Folder:
                {
                    var metadataId = await AddMetadataAsync(entry.Metadata);
                    await AddFileByPathAsync(entry.Path, entry.LastModifiedUtc, DuplicatiConstants.FolderBlocksetId, metadataId);
                    break;
                }

                case SourceEntryKind.Symlink:
                {
                    var metadataId = await AddMetadataAsync(entry.Metadata);
                    await AddFileByPathAsync(entry.Path, _time, DuplicatiConstants.SymlinkBlocksetId, metadataId);
                    break;
                }

                default:
                    await FileAsync(entry);
                    break;
            }
        }

        /// <summary>The end of a backup (<c>BackupHandler.RunAsync</c> 744-866, <c>UploadRealFilelist</c>).</summary>
        public async ValueTask FinishAsync(long filesetId, string dlist)
        {
            if (_volume is { } last)
            {
                if (last.Bytes > 0 || last.BlocklistsAdded > 0)
                {
                    await CloseVolumeAsync(last);
                }
                else
                {
                    await _db.RemoveRemoteVolumesAsync([last.Name], _ct);
                }

                _volume = null;
            }

            await _db.UpdateFullBackupStateAsync(filesetId, true, _ct);
            await _db.CommitAsync("FlushBackendMessagesAndCommit", _ct);
            await _db.CommitAsync("FlushBackendMessagesAndCommit", _ct);
            await _db.UpdateRemoteVolumeAsync(dlist, DuplicatiVolumeState.Uploading, -1, null, TimeSpan.Zero, _ct);
            await _db.CommitAsync("CommitUpdateRemoteVolume", _ct);
            await UploadAsync(dlist, 1024 + (_files * 256), null);
            await _db.CommitAsync("CommitUpdateRemoteVolume", _ct);
            await _db.CommitAsync("FlushBackendMessagesAndCommit", _ct);
            await _db.CommitAsync("CommitAfterUpload", _ct);
            await _db.RemoveDuplicatePathsFromFilesetAsync(filesetId, _ct);
            await _db.CommitAsync("CommitFinalizingBackup", _ct);

            // The remote listing after the backup (FilelistProcessor 486-492): each uploaded volume seen with its size.
            foreach (var (name, size, hash) in _uploaded)
            {
                await _db.UpdateRemoteVolumeAsync(name, DuplicatiVolumeState.Verified, size, hash, TimeSpan.Zero, _ct);
            }

            await _db.CommitAsync("CommitAfterVerification", _ct);
        }

        public BackupReplayResult Result(long filesetId, DateTime filesetTime, TimeSpan elapsed) =>
            new(filesetId, filesetTime, _entries, _files, _filesRead, _unchanged, _dataBlocks, _newBlocks, _blocklistBlocks, _blocksets, _volumes, elapsed);

        /// <summary>A regular file (<c>MetadataPreProcess</c>, <c>FilePreFilterProcess</c>, <c>FileBlockProcessor</c>).</summary>
        private async ValueTask FileAsync(SourceEntry entry)
        {
            _files++;
            var (prefix, name) = Split(entry.Path);
            long prefixId;
            if (string.Equals(prefix, _previousPrefix, StringComparison.Ordinal))
            {
                prefixId = _previousPrefixId;
            }
            else
            {
                prefixId = await _db.GetOrCreatePathPrefixAsync(prefix, _ct);
                (_previousPrefix, _previousPrefixId) = (prefix, prefixId);
            }

            var old = await _db.GetFileEntryAsync(prefixId, name, _previousFilesetId, _ct);
            var content = entry.Content!;
            var isNew = old is null;
            var lastWrite = entry.LastModifiedUtc;
            var timestampChanged = isNew || lastWrite.Ticks != old!.LastModified.Ticks || lastWrite.Ticks == 0 || old.LastModified.Ticks == 0;
            var metadataHash = FileHash(entry.Metadata);
            var metadataChanged = isNew || entry.Metadata.Length != old!.MetadataLength || metadataHash != old.MetadataHash;
            var sizeChanged = isNew || content.Length != old!.Length;
            if (!isNew && !timestampChanged && !sizeChanged && !metadataChanged)
            {
                _unchanged++;
                await _db.AddUnmodifiedAsync(old!.FileId, lastWrite, _ct);
                return;
            }

            _filesRead++;
            var oldHash = isNew ? null : await _db.GetFileHashAsync(old!.FileId, _ct);
            long metadataId = -1;
            if (!metadataChanged)
            {
                var (found, id) = await _db.GetMetadatasetIdAsync(metadataHash, entry.Metadata.Length, _ct);
                if (found)
                {
                    metadataId = id;
                }
                else
                {
                    metadataChanged = true;
                }
            }

            if (metadataChanged)
            {
                metadataId = await AddMetadataAsync(entry.Metadata);
            }

            var (fileHash, _, blocksetId) = await StreamAsync(content, null);
            if (oldHash != fileHash || metadataChanged)
            {
                await _db.AddFileAsync(prefixId, name, lastWrite, blocksetId, metadataId, _ct);
            }
            else
            {
                await _db.AddUnmodifiedAsync(old!.FileId, lastWrite, _ct);
            }
        }

        /// <summary>Folders and links (<c>AddDirectoryEntryAsync</c>, <c>AddSymlinkEntryAsync</c>): the path is split and its prefix looked up through the ring cache.</summary>
        private async ValueTask AddFileByPathAsync(string path, DateTime lastWrite, long blocksetId, long metadataId)
        {
            var (prefix, name) = Split(path);
            var prefixId = await _db.GetOrCreatePathPrefixAsync(prefix, _ct);
            await _db.AddFileAsync(prefixId, name, lastWrite, blocksetId, metadataId, _ct);
        }

        /// <summary><c>AddMetadataToOutputAsync</c>: the blob through the splitter (a blockset), then <c>AddMetadatasetAsync</c>.</summary>
        private async ValueTask<long> AddMetadataAsync(byte[] blob)
        {
            var (hash, length, blocksetId) = await StreamAsync(null, blob);
            var content = _replay._storeMetadataContent ? Encoding.UTF8.GetString(blob) : null;
            var (_, id) = await _db.AddMetadatasetAsync(hash, length, blocksetId, content, _ct);
            return id;
        }

        /// <summary>
        /// <c>StreamBlockSplitter</c> (80-163): per block its hash, a blocklist block emitted whenever the next hash would
        /// not fit in <c>blocksize</c> bytes, a trailing blocklist for more than one block, each block and blocklist
        /// block through the block processor, then <c>AddBlocksetAsync</c>.
        /// </summary>
        private async ValueTask<(string FileHash, long Length, long BlocksetId)> StreamAsync(SourceContent? content, byte[]? blob)
        {
            var blocksize = _cfg.Blocksize;
            var count = content?.BlockCount ?? ((blob!.Length + blocksize - 1) / blocksize);
            var blockHashes = new List<string>((int)Math.Min(count, 1 << 20));
            var blocklistHashes = new List<string>();
            using var fileHasher = DuplicatiHash.Incremental(_cfg.FileHash);
            var offset = 0;
            long length = 0;
            for (long i = 0; i < count; i++)
            {
                int size;
                if (content is not null)
                {
                    content.WriteBlockBytes(i, _blockBytes);
                    size = content.BlockSize(i);
                    fileHasher.AppendData(_blockBytes);
                }
                else
                {
                    size = (int)Math.Min(blocksize, blob!.Length - (i * blocksize));
                    fileHasher.AppendData(blob, (int)(i * blocksize), size);
                }

                ReadOnlySpan<byte> bytes = content is not null ? _blockBytes : blob.AsSpan((int)(i * blocksize), size);
                var hashSize = DuplicatiHash.Hash(_cfg.BlockHash, bytes, _hash);
                var key = Convert.ToBase64String(_hash, 0, hashSize);
                if (blocksize - offset < hashSize)
                {
                    blocklistHashes.Add(await EmitBlocklistAsync(offset));
                    offset = 0;
                }

                Array.Copy(_hash, 0, _blocklist, offset, hashSize);
                offset += hashSize;
                blockHashes.Add(key);
                length += size;
                if (content is not null)
                {
                    _dataBlocks++;
                }

                await BlockAsync(key, size, isBlocklist: false);
            }

            if (blockHashes.Count > 1)
            {
                blocklistHashes.Add(await EmitBlocklistAsync(offset));
            }

            var fileHash = Convert.ToBase64String(fileHasher.GetHashAndReset());
            var (created, blocksetId) = await _db.AddBlocksetAsync(fileHash, length, blocksize, blockHashes, blocklistHashes, _ct);
            if (created)
            {
                _blocksets++;
            }

            return (fileHash, length, blocksetId);
        }

        private async ValueTask<string> EmitBlocklistAsync(int used)
        {
            var hashSize = DuplicatiHash.Hash(_cfg.BlockHash, _blocklist.AsSpan(0, used), _blocklistHash);
            var key = Convert.ToBase64String(_blocklistHash, 0, hashSize);
            _blocklistBlocks++;
            await BlockAsync(key, used, isBlocklist: true);
            return key;
        }

        /// <summary><c>DataBlockProcessor</c> (77-157), with full index files (Duplicati's default): blocklist blocks always go to the index volume, so they open a volume without the probe.</summary>
        private async ValueTask BlockAsync(string hash, long size, bool isBlocklist)
        {
            if (_volume is null)
            {
                if (!isBlocklist && await _db.FindBlockIdAsync(hash, size, _ct) >= 0)
                {
                    return;
                }

                var name = VolumeName("b", "dblock");
                _volume = new Volume(name, await _db.RegisterRemoteVolumeAsync(name, DuplicatiVolumeType.Blocks, DuplicatiVolumeState.Temporary, _ct));
                _volumes++;
            }

            var volume = _volume;
            var isNew = await _db.AddBlockAsync(hash, size, volume.Id, _ct);
            if (isBlocklist && (isNew || !await _db.IsBlocklistHashKnownAsync(hash, _ct)))
            {
                volume.BlocklistsAdded++;
            }

            if (isNew)
            {
                _newBlocks++;
                volume.Bytes += size;
                if (volume.Bytes > _cfg.VolumeSize - _cfg.Blocksize)
                {
                    await CloseVolumeAsync(volume);
                    _volume = null;
                }
            }
        }

        /// <summary>A full (or the last) block volume: <c>Uploading</c>, its index volume and link, commit, upload.</summary>
        private async ValueTask CloseVolumeAsync(Volume volume)
        {
            await _db.UpdateRemoteVolumeAsync(volume.Name, DuplicatiVolumeState.Uploading, -1, null, TimeSpan.Zero, _ct);
            var index = VolumeName("i", "dindex");
            var indexId = await _db.RegisterRemoteVolumeAsync(index, DuplicatiVolumeType.Index, DuplicatiVolumeState.Temporary, _ct);
            await _db.AddIndexBlockLinkAsync(indexId, volume.Id, _ct);
            await _db.CommitAsync("CommitAddBlockToOutputFlush", _ct);
            await UploadAsync(volume.Name, volume.Bytes + 1024, (index, 512 + (volume.BlocklistsAdded * 64)));
        }

        /// <summary>
        /// <c>BackendManager.PutOperation</c>: the backend's database messages, each flushed with a commit
        /// (<c>FlushBackendMessagesAndCommitAsync</c>): <c>Uploading</c> with size and hash, the index volume
        /// <c>Uploading</c>, the "put" log row, <c>Uploaded</c>; then the index volume's own upload.
        /// </summary>
        private async ValueTask UploadAsync(string name, long size, (string Name, long Size)? index)
        {
            var hash = Convert.ToBase64String(SHA256.HashData(Encoding.UTF8.GetBytes(name)));
            await _db.UpdateRemoteVolumeAsync(name, DuplicatiVolumeState.Uploading, size, hash, TimeSpan.Zero, _ct);
            await _db.CommitAsync("FlushBackendMessagesAndCommit", _ct);
            if (index is { } i)
            {
                await _db.UpdateRemoteVolumeAsync(i.Name, DuplicatiVolumeState.Uploading, -1, null, TimeSpan.Zero, _ct);
                await _db.CommitAsync("FlushBackendMessagesAndCommit", _ct);
            }

            await _db.LogRemoteOperationAsync("put", name, string.Create(CultureInfo.InvariantCulture, $"{{\"Size\":{size},\"Hash\":\"{hash}\"}}"), _ct);
            await _db.CommitAsync("FlushBackendMessagesAndCommit", _ct);
            await _db.UpdateRemoteVolumeAsync(name, DuplicatiVolumeState.Uploaded, size, hash, TimeSpan.Zero, _ct);
            await _db.CommitAsync("FlushBackendMessagesAndCommit", _ct);
            _uploaded.Add((name, size, hash));
            if (index is { } j)
            {
                await UploadAsync(j.Name, j.Size, null);
            }
        }

        private string FileHash(byte[] blob)
        {
            using var hasher = DuplicatiHash.Incremental(_cfg.FileHash);
            hasher.AppendData(blob);
            return Convert.ToBase64String(hasher.GetHashAndReset());
        }

        private string DlistName(DateTime time) => string.Create(CultureInfo.InvariantCulture, $"{_cfg.Prefix}-{time:yyyyMMdd'T'HHmmss'Z'}.dlist.zip");

        /// <summary>A volume name as <c>VolumeBase</c> makes them, with 32 hex digits derived from the backup's time and a counter (repeatable).</summary>
        private string VolumeName(string letter, string kind)
        {
            var seed = SHA256.HashData(Encoding.UTF8.GetBytes(string.Create(CultureInfo.InvariantCulture, $"{_time.Ticks}/{_names++}/{kind}")));
            return $"{_cfg.Prefix}-{letter}{Convert.ToHexStringLower(seed, 0, 16)}.{kind}.zip";
        }

        private sealed class Volume(string name, long id)
        {
            public string Name { get; } = name;

            public long Id { get; } = id;

            public long Bytes { get; set; }

            public long BlocklistsAdded { get; set; }
        }
    }
}
