using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.InPlace;

namespace BlockDb.Bench.DuplicatiReplay;

/// <summary>One way to run the backup's database calls: opens the backup's database object on a Duplicati file.</summary>
/// <param name="Name">The name <c>--implementations</c> takes.</param>
/// <param name="Description">One line for the report.</param>
/// <param name="OpenBackup">Opens the object for one backup at the given time on the file at the path; disposing it closes the file.</param>
/// <param name="WritesFile">False for an implementation that keeps nothing (no file to copy or check).</param>
/// <param name="PrepareFile">Run once on the new file before the first backup, untimed (an upgrade, say); null: nothing.</param>
/// <param name="Missing">Indexes of Duplicati's schema the file lacks on purpose, for the consistency check.</param>
internal sealed record ReplayImplementation(
    string Name,
    string Description,
    Func<string, DateTime, CancellationToken, Task<IDuplicatiBackupDatabase>> OpenBackup,
    bool WritesFile = true,
    Action<string>? PrepareFile = null,
    IReadOnlyList<string>? Missing = null);

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
        async (path, time, cancellationToken) => await DuplicatiBackupStatements.OpenAsync(StatementTrace.Attach(DuplicatiConnection.Open(path)), time, ownsConnection: true, cancellationToken: cancellationToken));

    /// <summary>No database at all: what the replay itself costs (source, hashing, blocklists), to read the other figures against.</summary>
    public static readonly ReplayImplementation None = new(
        "none",
        "no database: every block and blockset new, every call answered in memory (the replay's own cost: source, hashes, blocklists)",
        (_, _, _) => Task.FromResult<IDuplicatiBackupDatabase>(new NoDatabase()),
        WritesFile: false);

    /// <summary>Duplicati's own statements on the file after <see cref="DuplicatiUpgrade.Statements"/> (run by Duplicati's connection, as its upgrader could): what the upgrade alone gives Duplicati.</summary>
    public static readonly ReplayImplementation DuplicatiUpgraded = new(
        "duplicati-upgraded",
        "as duplicati, on the file after DuplicatiUpgrade.Statements (BlocksetEntry_BlocksetID dropped), run in Duplicati's own transaction",
        Duplicati.OpenBackup,
        PrepareFile: path => DuplicatiConnection.RunInTransaction(path, DuplicatiUpgrade.Statements),
        Missing: ["BlocksetEntry_BlocksetID"]);

    /// <summary>Lab, not shipped: also without BlockHashVolumeID, which DuplicatiUpgrade keeps (it serves recreate's per-volume blocklist query).</summary>
    public static readonly ReplayImplementation LabNoHashVolumeId = new(
        "lab-no-hashvolumeid",
        "lab, not a supported state: as duplicati-upgraded, and BlockHashVolumeID dropped too (what that index costs a backup)",
        Duplicati.OpenBackup,
        PrepareFile: path => DuplicatiConnection.RunInTransaction(path, [.. DuplicatiUpgrade.Statements, """DROP INDEX "BlockHashVolumeID" """]),
        Missing: ["BlocksetEntry_BlocksetID", "BlockHashVolumeID"]);

    /// <summary>Lab: the upgrade with 16 KiB pages (Duplicati's files have SQLite's default 4 KiB), to decide whether a page-size step is worth offering.</summary>
    public static readonly ReplayImplementation LabPage16K = new(
        "lab-page16k",
        "lab: as duplicati-upgraded, on a file rebuilt with page_size 16384 (journal_mode DELETE, page_size, VACUUM, back to WAL)",
        Duplicati.OpenBackup,
        PrepareFile: path =>
        {
            DuplicatiConnection.RunInTransaction(path, DuplicatiUpgrade.Statements);
            using var connection = DuplicatiConnection.Open(path);
            foreach (var sql in new[] { "PRAGMA journal_mode = DELETE", "PRAGMA page_size = 16384", "VACUUM", "PRAGMA journal_mode = WAL" })
            {
                using var command = connection.CreateCommand();
                command.CommandText = sql;
                command.ExecuteNonQuery();
            }
        },
        Missing: ["BlocksetEntry_BlocksetID"]);

    /// <summary>BlockDb in place, inside Duplicati's transaction: blocks, blocksets and Blocks volumes through one BlockDb session on Duplicati's connection, the rest Duplicati's statements (<see cref="BlockDbBackupDatabase"/>).</summary>
    public static readonly ReplayImplementation BlockDbInPlace = new(
        "blockdb-inplace",
        "BlockDb on Duplicati's connection and always-open transaction (UseCallerConnection + MicrosoftDataDriver.Borrow): blocks, blocksets, BlocklistHash rows and Blocks volumes; the file rows Duplicati's statements; Duplicati's commits",
        async (path, time, cancellationToken) => await BlockDbBackupDatabase.OpenAsync(StatementTrace.Attach(DuplicatiConnection.Open(path)), time, ownsConnection: true, cancellationToken));

    /// <summary>As <see cref="BlockDbInPlace"/>, on the file after <see cref="DuplicatiUpgrade.Statements"/>.</summary>
    public static readonly ReplayImplementation BlockDbUpgraded = new(
        "blockdb-upgraded",
        "as blockdb-inplace, on the file after DuplicatiUpgrade.Statements (BlocksetEntry_BlocksetID dropped)",
        BlockDbInPlace.OpenBackup,
        PrepareFile: DuplicatiUpgraded.PrepareFile,
        Missing: DuplicatiUpgraded.Missing);

    /// <summary>Every implementation, baseline first.</summary>
    public static readonly IReadOnlyList<ReplayImplementation> All = [Duplicati, BlockDbInPlace, DuplicatiUpgraded, BlockDbUpgraded, LabNoHashVolumeId, LabPage16K, None];

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
