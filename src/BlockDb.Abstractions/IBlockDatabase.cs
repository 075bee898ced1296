namespace BlockDb;

/// <summary>
/// An open block index: one SQLite file with its schema checked or created, through one provider.
/// Thread-safe: open one <see cref="IBlockRepository"/> session per concurrent task.
/// Disposing it after its sessions releases the file.
/// </summary>
public interface IBlockDatabase : IAsyncDisposable, IDisposable
{
    /// <summary>The provider's name, for example <c>PInvoke</c>.</summary>
    string ProviderName { get; }

    /// <summary>The native SQLite version this provider loaded (<c>sqlite_version()</c>), for example <c>3.50.4</c>.</summary>
    string SqliteVersion { get; }

    /// <summary>The full path of the database file.</summary>
    string DataSource { get; }

    /// <summary>The pragma values read back from the first connection after applying the options.</summary>
    PragmaSettings AppliedPragmas { get; }

    /// <summary>The options this database was opened with (validated when it opened).</summary>
    BlockDbOptions Options { get; }

    /// <summary>
    /// The file's block layout, as recorded in it (schema version 1: <see cref="BlockLayout.TextHash"/>; version 2:
    /// the <c>BlockDbSettings</c> row). A new file gets <see cref="IndexOptions.Layout"/>, or <see cref="IndexOptions.DefaultLayout"/> when unset.
    /// </summary>
    BlockLayout Layout { get; }

    /// <summary>
    /// The <see cref="BlockLayout.KeyMap"/> layout's in-memory key map: blocks held and bytes used (8 per slot),
    /// or (0, 0) for the other layouts and before the first lookup loads it.
    /// </summary>
    (long Blocks, long Bytes) KeyMapUsage { get; }

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
    /// <exception cref="BlockDbException">Another writer holds the write lock (<c>SQLITE_BUSY</c>), or SQLite failed; nothing was changed.</exception>
    ValueTask<BlockDbRepairResult> RepairAsync(CancellationToken cancellationToken = default);

    /// <summary>Opens a repository session on its own connection, with the pragmas applied and verified.</summary>
    /// <param name="cancellationToken">Cancels before the connection opens.</param>
    /// <returns>A session that the caller disposes; not thread-safe.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbException">SQLite failed to open or configure the connection.</exception>
    ValueTask<IBlockRepository> OpenSessionAsync(CancellationToken cancellationToken = default);

    /// <summary>
    /// Opens a thread-safe repository for many concurrent tasks: one writer connection that gathers concurrent
    /// writes into shared transactions (group commit, <see cref="BlockDbOptions.GroupCommit"/>), and a pool of
    /// reader connections for find, list and get, which see committed data only. Keep one per database.
    /// </summary>
    /// <returns>The shared repository; dispose it to finish queued writes and close its connections.</returns>
    /// <exception cref="ObjectDisposedException">The database was disposed.</exception>
    /// <exception cref="BlockDbException">SQLite failed to open the writer connection.</exception>
    ISharedBlockRepository OpenSharedRepository();
}
