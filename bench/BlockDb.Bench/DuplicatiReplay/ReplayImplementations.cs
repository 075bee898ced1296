using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Replay;

namespace BlockDb.Bench.DuplicatiReplay;

/// <summary>One way to run the backup's database calls: opens the backup's database object on a Duplicati file.</summary>
/// <param name="Name">The name <c>--implementations</c> takes.</param>
/// <param name="Description">One line for the report.</param>
/// <param name="OpenBackup">Opens the object for one backup at the given time on the file at the path; disposing it closes the file.</param>
/// <param name="WritesFile">False for an implementation that keeps nothing (no file to copy or check).</param>
internal sealed record ReplayImplementation(string Name, string Description, Func<string, DateTime, CancellationToken, Task<IDuplicatiBackupDatabase>> OpenBackup, bool WritesFile = true);

/// <summary>
/// The implementations <c>duplicati-replay</c> runs side by side, each on its own copy of the same starting file with the
/// same source. The seam: BlockDb's in-place implementation of <see cref="IDuplicatiBackupDatabase"/> (issue 24, on
/// Duplicati's connection and transaction, delegating the file rows to <see cref="DuplicatiBackupStatements"/>) is one
/// more line here, and every figure then has its side-by-side ratio.
/// </summary>
internal static class ReplayImplementations
{
    /// <summary>Duplicati's own statements, the baseline every ratio is taken against.</summary>
    public static readonly ReplayImplementation Duplicati = new(
        "duplicati",
        "Duplicati's own LocalBackupDatabase statements on Microsoft.Data.Sqlite, its pragmas, Pooling=false, one always-open deferred transaction",
        async (path, time, cancellationToken) => await DuplicatiBackupStatements.OpenAsync(DuplicatiConnection.Open(path), time, ownsConnection: true, cancellationToken: cancellationToken));

    /// <summary>No database at all: what the replay itself costs (source, hashing, blocklists), to read the other figures against.</summary>
    public static readonly ReplayImplementation None = new(
        "none",
        "no database: every block and blockset new, every call answered in memory (the replay's own cost: source, hashes, blocklists)",
        (_, _, _) => Task.FromResult<IDuplicatiBackupDatabase>(new NoDatabase()),
        WritesFile: false);

    /// <summary>Every implementation, baseline first.</summary>
    public static readonly IReadOnlyList<ReplayImplementation> All = [Duplicati, None];

    /// <summary>The implementation of that name (case-insensitive).</summary>
    /// <exception cref="ArgumentException">No implementation has that name.</exception>
    public static ReplayImplementation Get(string name) =>
        All.FirstOrDefault(i => i.Name.Equals(name.Trim(), StringComparison.OrdinalIgnoreCase))
        ?? throw new ArgumentException($"Unknown implementation '{name}'; valid: {string.Join(", ", All.Select(i => i.Name))}.");

    /// <summary>Answers every call from memory; nothing is found, everything is new.</summary>
    private sealed class NoDatabase : IDuplicatiBackupDatabase
    {
        private long _id;

        public long OperationId => 1;

        public ValueTask CommitAsync(string reason, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask<long> RegisterRemoteVolumeAsync(string name, DuplicatiVolumeType type, DuplicatiVolumeState state, CancellationToken cancellationToken) => Next();

        public ValueTask UpdateRemoteVolumeAsync(string name, DuplicatiVolumeState state, long size, string? hash, TimeSpan deleteGrace, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask<long> GetRemoteVolumeIdAsync(string name, CancellationToken cancellationToken) => ValueTask.FromResult(-1L);

        public ValueTask RemoveRemoteVolumesAsync(IReadOnlyList<string> names, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask LogRemoteOperationAsync(string operation, string path, string? data, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask<IReadOnlyDictionary<string, string>> GetConfigurationAsync(CancellationToken cancellationToken) => ValueTask.FromResult<IReadOnlyDictionary<string, string>>(new Dictionary<string, string>());

        public ValueTask SetConfigurationAsync(IReadOnlyDictionary<string, string> rows, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask<long> CountBlocksLargerThanAsync(long blocksize, CancellationToken cancellationToken) => ValueTask.FromResult(0L);

        public ValueTask<(long Id, DateTime TimeUtc)?> GetLastFilesetAsync(CancellationToken cancellationToken) => ValueTask.FromResult<(long, DateTime)?>(null);

        public ValueTask<long> CreateFilesetAsync(long volumeId, DateTime timestampUtc, CancellationToken cancellationToken) => Next();

        public ValueTask UpdateFullBackupStateAsync(long filesetId, bool isFullBackup, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask<long> FindBlockIdAsync(string hash, long size, CancellationToken cancellationToken) => ValueTask.FromResult(-1L);

        public ValueTask<bool> AddBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken) => ValueTask.FromResult(true);

        public ValueTask<bool> IsBlocklistHashKnownAsync(string hash, CancellationToken cancellationToken) => ValueTask.FromResult(false);

        public async ValueTask<(bool Created, long Id)> AddBlocksetAsync(string fullHash, long length, int blocksize, IReadOnlyList<string> blockHashes, IReadOnlyList<string> blocklistHashes, CancellationToken cancellationToken) => (true, await Next());

        public ValueTask<(bool Found, long Id)> GetMetadatasetIdAsync(string hash, long size, CancellationToken cancellationToken) => ValueTask.FromResult((false, -1L));

        public async ValueTask<(bool Created, long Id)> AddMetadatasetAsync(string hash, long size, long blocksetId, string? content, CancellationToken cancellationToken) => (true, await Next());

        public ValueTask<long> GetOrCreatePathPrefixAsync(string prefix, CancellationToken cancellationToken) => Next();

        public ValueTask<PreviousFileEntry?> GetFileEntryAsync(long prefixId, string name, long filesetId, CancellationToken cancellationToken) => ValueTask.FromResult<PreviousFileEntry?>(null);

        public ValueTask<string?> GetFileHashAsync(long fileId, CancellationToken cancellationToken) => ValueTask.FromResult<string?>(null);

        public ValueTask AddFileAsync(long prefixId, string name, DateTime lastModifiedUtc, long blocksetId, long metadataId, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask AddUnmodifiedAsync(long fileId, DateTime lastModifiedUtc, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask AddIndexBlockLinkAsync(long indexVolumeId, long blockVolumeId, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask RemoveDuplicatePathsFromFilesetAsync(long filesetId, CancellationToken cancellationToken) => ValueTask.CompletedTask;

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;

        private ValueTask<long> Next() => ValueTask.FromResult(++_id);
    }
}
