namespace BlockDb;

/// <summary>
/// An open block index, through one provider: a SQLite file with its schema checked or created, or a database on a
/// server. Thread-safe: open one <see cref="IBlockSession"/> session per concurrent task, or one
/// <see cref="ISharedBlockSession"/> for many. Disposing it waits for or fails every call in flight and releases
/// the file or the connections; a second dispose, concurrent or later, returns only when that is done. Build one with <c>BlockDatabaseBuilder</c>, <c>BlockDatabase.Open</c> or
/// <c>services.AddBlockDb(...)</c>. What only SQLite has is on <see cref="ISqliteBlockDatabase"/>.
/// </summary>
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

    /// <summary>
    /// A copy of the options this database was built with, validated and frozen then (<see cref="BlockDbOptions.Provider"/>
    /// holds the provider chosen). Each read returns a new copy; changing it changes nothing.
    /// </summary>
    BlockDbOptions Options { get; }

    /// <summary>
    /// The file's block layout, as recorded in it (schema version 1: <see cref="BlockLayout.TextHash"/>; version 2 and
    /// later: the <c>BlockDbSettings</c> row). A new file gets <see cref="IndexOptions.Layout"/>, or
    /// <see cref="IndexOptions.DefaultLayout"/> when unset. A server's index reports the layout its design matches
    /// (<see cref="BlockLayout.BlobHash"/>: binary hashes under a unique index).
    /// </summary>
    BlockLayout Layout { get; }

    /// <summary>
    /// Checks the file in one read snapshot, beside running writers: duplicate (Hash, Size) groups, blockset entries
    /// that name missing blocks, blocksets whose <c>Length</c> is not the sum of their blocks, entries out of order
    /// or with gaps, block IDs the layout cannot hold, for <see cref="BlockLayout.KeyMap"/> the key map against the
    /// table and the guards, and <c>PRAGMA integrity_check</c>. Reads every row: seconds per million blocks.
    /// </summary>
    /// <param name="cancellationToken">Cancels before the check and between its queries.</param>
    /// <returns>The counts and the first offending IDs.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbException">SQLite failed.</exception>
    ValueTask<BlockDbCheckResult> CheckAsync(CancellationToken cancellationToken = default);

    /// <summary>
    /// Repairs what can be repaired without losing data, in one transaction: merges duplicate (Hash, Size) groups
    /// (entries repointed to the lowest ID, the other rows deleted), renumbers KeyMap blocks whose ID is out of
    /// range, and re-creates missing KeyMap guards; then checks again. Refuses to run beside another writer: when
    /// the write lock is taken (by another process, or by a session of this database with an open batch), it
    /// fails at once with <c>SQLITE_BUSY</c> and changes nothing.
    /// </summary>
    /// <param name="cancellationToken">Cancels before the repair starts.</param>
    /// <returns>What changed, and the check afterwards.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database was opened with <see cref="BlockDbOptions.ReadOnly"/>.</exception>
    /// <exception cref="NotSupportedException">The file has the <see cref="BlockLayout.Duplicati"/> layout: use Duplicati's own repair.</exception>
    /// <exception cref="BlockDbException">Another writer holds the write lock (<c>SQLITE_BUSY</c>), or SQLite failed; nothing was changed.</exception>
    ValueTask<BlockDbRepairResult> RepairAsync(CancellationToken cancellationToken = default);

    /// <summary>
    /// Streams the blocks in ID order, all or those <paramref name="filter"/> selects, from one read snapshot on a
    /// connection of its own: it runs beside writers (in WAL mode) and sees what was committed when it started. The
    /// snapshot is held until the enumeration ends or is disposed (a long enumeration keeps the WAL from being checkpointed
    /// past it). Disposing the database cancels it.
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
    /// Bulk import of blocks, for a rebuild of the index from a backup's remote files (Duplicati's "recreate"): each block
    /// is select-xor-inserted (a block already in the index, or earlier in the input, is skipped), in transactions of
    /// <see cref="ImportOptions.ItemsPerTransaction"/> blocks. Each transaction is all or nothing; after a crash, a failure
    /// or a cancellation the committed transactions stay, and importing the same input again resumes. Runs on a
    /// connection of its own, beside sessions and other processes (it holds the write lock while a transaction is open).
    /// </summary>
    /// <param name="blocks">The blocks, read once, in any order (blocks of one volume together import fastest).</param>
    /// <param name="options">Transaction size and progress reporting; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Checked between blocks.</param>
    /// <returns>The blocks read, created and skipped, and the transactions committed.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="blocks"/> is null.</exception>
    /// <exception cref="ArgumentException">A block's hash is empty or its size below 1 (the transaction in progress is rolled back; earlier ones stay).</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range (nothing imported).</exception>
    /// <exception cref="VolumeNotFoundException">A new block names a volume that does not exist (the transaction in progress is rolled back).</exception>
    /// <exception cref="BlockDbConflictException">A new block names a volume being deleted (the transaction in progress is rolled back).</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="NotSupportedException">The file has the <see cref="BlockLayout.Duplicati"/> layout (sessions arrive with a later step; nothing imported).</exception>
    /// <exception cref="OperationCanceledException">Cancelled (the transaction in progress is rolled back).</exception>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed (the transaction in progress is rolled back).</exception>
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
    /// <exception cref="ArgumentException">A block's hash is empty or its size below 1 (the transaction in progress is rolled back).</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range (nothing imported).</exception>
    /// <exception cref="BlockNotFoundException">A blockset names a block that is not in the index (the transaction in progress is rolled back).</exception>
    /// <exception cref="BlockDbConflictException">A blockset names a block in a volume being deleted (the transaction in progress is rolled back).</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="NotSupportedException">The file has the <see cref="BlockLayout.Duplicati"/> layout (sessions arrive with a later step; nothing imported).</exception>
    /// <exception cref="OperationCanceledException">Cancelled (the transaction in progress is rolled back).</exception>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed (the transaction in progress is rolled back).</exception>
    ValueTask<ImportResult> ImportBlocksetsAsync(IAsyncEnumerable<ImportBlockset> blocksets, ImportOptions? options = null, CancellationToken cancellationToken = default);

    /// <summary>Opens a session on its own connection, with the pragmas applied and verified.</summary>
    /// <param name="cancellationToken">Cancels before the connection opens.</param>
    /// <returns>A session that the caller disposes; not thread-safe.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="NotSupportedException">The file has the <see cref="BlockLayout.Duplicati"/> layout (sessions arrive with a later step).</exception>
    /// <exception cref="BlockDbException">SQLite failed to open or configure the connection.</exception>
    ValueTask<IBlockSession> OpenSessionAsync(CancellationToken cancellationToken = default);

    /// <summary>
    /// Opens a thread-safe session for many concurrent tasks: one writer connection that gathers concurrent
    /// writes into shared transactions (group commit, <see cref="BlockDbOptions.GroupCommit"/>), and a pool of
    /// reader connections for find, list and get, which see committed data only. Keep one per database.
    /// </summary>
    /// <returns>The shared session; dispose it to finish queued writes and close its connections.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="NotSupportedException">The file has the <see cref="BlockLayout.Duplicati"/> layout (sessions arrive with a later step).</exception>
    /// <exception cref="BlockDbException">SQLite failed to open the writer connection.</exception>
    ISharedBlockSession OpenSharedSession();
}
