namespace BlockDb;

/// <summary>
/// An open block index: a SQLite file or a database on a server. Thread-safe: open one <see cref="IBlockSession"/> per
/// concurrent task, or one <see cref="ISharedBlockSession"/> for many. Open one with <c>BlockDatabase.Open</c>,
/// <c>BlockDatabaseBuilder</c> or <c>AddBlockDb</c>; what only SQLite has is on <see cref="ISqliteBlockDatabase"/>.
/// </summary>
/// <remarks>
/// Dispose waits for or fails every call in flight, then releases the file or the connections; a second dispose,
/// concurrent or later, returns only when that is done.
/// </remarks>
public interface IBlockDatabase : IAsyncDisposable, IDisposable
{
    /// <summary>The provider's name, for example <c>PInvoke</c>.</summary>
    string ProviderName { get; }

    /// <summary>The database engine: <c>SQLite</c> or <c>PostgreSQL</c>.</summary>
    string Engine { get; }

    /// <summary>The engine's version: for SQLite the native library's (<c>sqlite_version()</c>, for example <c>3.50.4</c>), for a server the server's (<c>server_version</c>).</summary>
    string EngineVersion { get; }

    /// <summary>Where the index lives: the full path of the database file, or for a server its host, port and database (never a password).</summary>
    string DataSource { get; }

    /// <summary>A new copy, at each read, of the options this database was built with (<see cref="BlockDbOptions.Provider"/>: the provider chosen).</summary>
    BlockDbOptions Options { get; }

    /// <summary>
    /// The file's block layout, as the file records it or as recognised (<see cref="BlockLayout.Duplicati"/>); a new file
    /// gets <see cref="IndexOptions.Layout"/>. A server reports <see cref="BlockLayout.BlobHash"/>, the design it matches.
    /// </summary>
    BlockLayout Layout { get; }

    /// <summary>
    /// Checks the whole index in one read snapshot, beside running writers (seconds per million blocks); the findings
    /// are listed on <see cref="BlockDbCheckResult"/>.
    /// </summary>
    /// <param name="cancellationToken">Cancels before the check and between its queries.</param>
    /// <returns>The counts and the first offending IDs.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="InvalidOperationException">On a caller's connection, the caller's transaction is not open.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<BlockDbCheckResult> CheckAsync(CancellationToken cancellationToken = default);

    /// <summary>
    /// Repairs what can be repaired without losing data, in one transaction, then checks again: merges duplicate
    /// (Hash, Size) groups into their lowest ID, renumbers KeyMap blocks whose ID is out of range and re-creates missing
    /// KeyMap guards. Fails at once, changing nothing, when another writer holds the write lock.
    /// </summary>
    /// <param name="cancellationToken">Cancels before the repair starts.</param>
    /// <returns>What changed, and the check afterwards.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database was opened with <see cref="BlockDbOptions.ReadOnly"/>.</exception>
    /// <exception cref="NotSupportedException">The file has the <see cref="BlockLayout.Duplicati"/> layout (use Duplicati's repair), or the database runs on a caller's connection.</exception>
    /// <exception cref="BlockDbException">Another writer holds the write lock (<c>SQLITE_BUSY</c>), or SQLite failed; nothing was changed.</exception>
    ValueTask<BlockDbRepairResult> RepairAsync(CancellationToken cancellationToken = default);

    /// <summary>
    /// Streams the blocks in ID order, all or those <paramref name="filter"/> selects, from one read snapshot held until
    /// the enumeration ends (in WAL mode it runs beside writers, and holds back checkpoints). Disposing the database
    /// cancels it.
    /// </summary>
    /// <param name="filter">Which blocks; <see langword="null"/>: all.</param>
    /// <param name="cancellationToken">Cancels between rows.</param>
    /// <returns>The blocks.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="OperationCanceledException">Cancelled.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    IAsyncEnumerable<BlockInfo> EnumerateBlocksAsync(BlockFilter? filter = null, CancellationToken cancellationToken = default);

    /// <summary>Streams the blocksets in ID order from one read snapshot, as <see cref="EnumerateBlocksAsync"/> does.</summary>
    /// <param name="cancellationToken">Cancels between rows.</param>
    /// <returns>The blocksets, each with its length in bytes, full hash and block count.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="OperationCanceledException">Cancelled.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    IAsyncEnumerable<BlocksetInfo> EnumerateBlocksetsAsync(CancellationToken cancellationToken = default);

    /// <summary>Streams the volumes in ID order from one read snapshot, each with the blocks and bytes it holds, referenced or not.</summary>
    /// <param name="cancellationToken">Cancels between rows.</param>
    /// <returns>The volumes.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="OperationCanceledException">Cancelled.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    IAsyncEnumerable<VolumeInfo> EnumerateVolumesAsync(CancellationToken cancellationToken = default);

    /// <summary>
    /// Bulk import of blocks, to rebuild an index from a backup's remote files (Duplicati's "recreate"): each block is
    /// select-xor-inserted, in transactions of <see cref="ImportOptions.ItemsPerTransaction"/> blocks, on a connection of
    /// its own. A failure or cancellation rolls back the transaction in progress; committed ones stay, and importing the
    /// same input again resumes.
    /// </summary>
    /// <param name="blocks">The blocks, read once, in any order (one volume's blocks together import fastest).</param>
    /// <param name="options">Transaction size and progress reporting; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Checked between blocks.</param>
    /// <returns>The blocks read, created and skipped, and the transactions committed.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="blocks"/> is null.</exception>
    /// <exception cref="ArgumentException">A block's hash is empty or its size below 1.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range (nothing imported).</exception>
    /// <exception cref="VolumeNotFoundException">A new block names a volume that does not exist.</exception>
    /// <exception cref="BlockDbConflictException">A new block names a volume being deleted.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="NotSupportedException">The database runs on a caller's connection (nothing imported).</exception>
    /// <exception cref="OperationCanceledException">Cancelled.</exception>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<ImportResult> ImportBlocksAsync(IAsyncEnumerable<ImportBlock> blocks, ImportOptions? options = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// Bulk import of blocksets, after their blocks (<see cref="ImportBlocksAsync"/>): each is added from its blocks in
    /// order, which must already be in the index (unlike <see cref="IBlockWriter.AddBlocksetAsync"/>, the import creates none),
    /// unless one with the same full hash and length is already in the index (then it is skipped, so a re-run resumes).
    /// Transactions, failures and cancellation as in <see cref="ImportBlocksAsync"/>.
    /// </summary>
    /// <param name="blocksets">The blocksets, read once.</param>
    /// <param name="options">Transaction size and progress reporting; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Checked between blocksets.</param>
    /// <returns>The blocksets read, created and skipped, and the transactions committed.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="blocksets"/> or an item is null.</exception>
    /// <exception cref="ArgumentException">A block's hash is empty or its size below 1.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range (nothing imported).</exception>
    /// <exception cref="BlockNotFoundException">A blockset names a block that is not in the index.</exception>
    /// <exception cref="BlockDbConflictException">A blockset names a block in a volume being deleted.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="NotSupportedException">The database runs on a caller's connection (nothing imported).</exception>
    /// <exception cref="OperationCanceledException">Cancelled.</exception>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<ImportResult> ImportBlocksetsAsync(IAsyncEnumerable<ImportBlockset> blocksets, ImportOptions? options = null, CancellationToken cancellationToken = default);

    /// <summary>Opens a session on its own connection, with the pragmas applied and verified (on a caller's connection: on that one).</summary>
    /// <param name="cancellationToken">Cancels before the connection opens.</param>
    /// <returns>A session that the caller disposes; not thread-safe.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="InvalidOperationException">On a caller's connection: a session is open already, or the caller's transaction is not.</exception>
    /// <exception cref="BlockDbException">The database failed to open or configure the connection.</exception>
    ValueTask<IBlockSession> OpenSessionAsync(CancellationToken cancellationToken = default);

    /// <summary>Opens a thread-safe session for many concurrent tasks (<see cref="BlockDbOptions.GroupCommit"/>); keep one per database.</summary>
    /// <returns>The shared session; dispose it to finish queued writes and close its connections.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="NotSupportedException">The database runs on a caller's connection.</exception>
    /// <exception cref="BlockDbException">The database failed to open the writer connection.</exception>
    ISharedBlockSession OpenSharedSession();
}
