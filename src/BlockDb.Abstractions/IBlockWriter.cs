namespace BlockDb;

/// <summary>
/// The write calls of a block index, the same on a session (<see cref="IBlockSession"/>: in its commit batch) and on
/// the shared session (<see cref="ISharedBlockSession"/>: each call completes once committed).
/// </summary>
/// <remarks>
/// A failed write writes nothing of its own and leaves earlier writes of the batch intact, unless the database rolled
/// the whole batch back (<see cref="BlockDbBatchRolledBackException"/>). Invalid input throws
/// <see cref="ArgumentException"/> before anything is written; a read-only database throws
/// <see cref="BlockDbReadOnlyException"/>. On a Duplicati database (<see cref="BlockLayout.Duplicati"/>) the calls follow
/// Duplicati's rules: a new block needs a Blocks volume, a blockset its full hash and its blocklist blocks stored
/// first, and a collected block's ID may be given to a new block (README, "Using BlockDb from Duplicati";
/// <see href="https://github.com/duplicati/duplicati/blob/master/Duplicati/Library/Main/Database/Local/LocalBackupDatabase.cs"/>).
/// </remarks>
public interface IBlockWriter
{
    /// <summary>
    /// Finds a block's ID, inserting the block when absent (select-xor-insert): a created block's bytes are the caller's
    /// to store. A new block is recorded in <paramref name="volumeId"/>; a block that exists keeps its volume. An insert
    /// counts as one write of the batch.
    /// </summary>
    /// <param name="block">The block's key; from Duplicati's base64 text, <see cref="BlockKey.Parse"/>.</param>
    /// <param name="volumeId">The volume that holds a new block, or <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Cancels before the lookup.</param>
    /// <returns>The ID and whether this call created the block.</returns>
    /// <exception cref="ArgumentException"><paramref name="block"/> is <c>default(BlockKey)</c>.</exception>
    /// <exception cref="VolumeNotFoundException">The call may insert (the block is new, or the strategy inserts first) and no volume has that ID.</exception>
    /// <exception cref="BlockDbConflictException">The call may insert and the volume is being deleted or is deleted.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<SelectXorInsertResult> SelectXorInsertAsync(BlockKey block, long? volumeId = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// Select-xor-insert of many blocks in one call, as one <see cref="SelectXorInsertAsync"/> per block in order, in
    /// one transaction (a batch commits only between calls). The call is whole, on every session: when it throws, none of
    /// its blocks stays, and the batch's earlier writes do (unless <see cref="BlockDbBatchRolledBackException"/>). Read
    /// nothing from <paramref name="results"/> then: it may hold IDs of blocks that were rolled back.
    /// </summary>
    /// <param name="blocks">The blocks, in order; duplicates are allowed (the later ones find the first).</param>
    /// <param name="results">Receives one result per block, at the same index; at least as long as <paramref name="blocks"/>.</param>
    /// <param name="volumeId">The volume that holds the new blocks, or <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Checked before and between blocks.</param>
    /// <returns>How many blocks this call created.</returns>
    /// <exception cref="ArgumentException"><paramref name="results"/> is shorter than <paramref name="blocks"/>, or a block is <c>default(BlockKey)</c> (nothing was written: every block is checked first).</exception>
    /// <exception cref="OperationCanceledException">Cancelled between blocks.</exception>
    /// <exception cref="VolumeNotFoundException">A block is new and no volume has that ID.</exception>
    /// <exception cref="BlockDbConflictException">A block is new and the volume is being deleted or is deleted.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<int> SelectXorInsertManyAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// Adds a file's blockset from its blocks in order, named by their keys. The blocks are select-xor-inserted in the
    /// same call (as <see cref="SelectXorInsertManyAsync"/>): a block not in the index, or collected since the caller
    /// found or inserted it, is created and marked <see cref="SelectXorInsertResult.Created"/> in
    /// <paramref name="results"/>. The caller must upload every block marked created, the same rule as for
    /// <see cref="SelectXorInsertAsync"/>. The blockset's <c>Length</c> is the sum of the sizes in bytes; no blocks is
    /// the blockset of an empty file (length 0, no entries). The call is whole, on every session: when it throws, neither
    /// the blockset nor any block it created stays, and the batch's earlier writes do unless it throws
    /// <see cref="BlockDbBatchRolledBackException"/>: every block is looked up and every refusal made before the first
    /// write, and a failure among the writes themselves (the engine's: a full disk, an I/O error, a foreign trigger's
    /// abort) rolls the open batch back on the SQLite layouts, which write with no savepoint per call (Duplicati's layout
    /// once the volume was found fit in the open batch, as when a block was recorded in it). Counts as one write. Read nothing from <paramref name="results"/> when the call throws: it may hold IDs of
    /// blocks that were rolled back.
    /// </summary>
    /// <param name="blocks">The file's blocks in order; empty for an empty file.</param>
    /// <param name="results">Receives one result per block, at the same index (its ID, and whether the call created it); at least as long as <paramref name="blocks"/>.</param>
    /// <param name="fullHash">The hash of the whole content (stored as base64 text), or the empty <see langword="default"/> for none.</param>
    /// <param name="volumeId">The volume that holds the created blocks, or <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Checked before and between blocks while they are looked up; once the writes begin, the call completes.</param>
    /// <returns>The new blockset's ID.</returns>
    /// <exception cref="ArgumentException"><paramref name="results"/> is shorter than <paramref name="blocks"/>, or a block is <c>default(BlockKey)</c> (nothing was written); <see cref="ArgumentOutOfRangeException"/> when the sizes add up to more than <see cref="long.MaxValue"/> bytes.</exception>
    /// <exception cref="OperationCanceledException">Cancelled; the blockset was not written.</exception>
    /// <exception cref="VolumeNotFoundException">A block is new and no volume has that ID; the blockset was not written.</exception>
    /// <exception cref="BlockDbConflictException">A block is new and the volume is being deleted, or a block found is in such a volume; the blockset was not written.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbBatchRolledBackException">A write failed after every check passed, and the open batch was rolled back with it (its <see cref="BlockDbBatchRolledBackException.LostWrites"/> writes are gone).</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<long> AddBlocksetAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash = default, long? volumeId = null, CancellationToken cancellationToken = default);

    /// <summary>Deletes a blockset and its entries, all or nothing; its blocks stay for <see cref="DeleteUnreferencedBlocksAsync"/>. Counts as one write.</summary>
    /// <param name="blocksetId">The blockset ID.</param>
    /// <param name="cancellationToken">Cancels before the delete.</param>
    /// <returns>A task that completes when the delete is in the batch (a session) or committed (the shared session).</returns>
    /// <exception cref="BlocksetNotFoundException">No blockset has that ID; nothing was written.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Deletes the blocks no blockset references (garbage collection), all of them or one volume's, inside the write
    /// transaction. A block found earlier and named in a blockset after this deleted it gives
    /// <see cref="BlockNotFoundException"/>: select-xor-insert it again. Counts as one write.
    /// </summary>
    /// <param name="volumeId">Only this volume's blocks; <see langword="null"/>: every unreferenced block.</param>
    /// <param name="cancellationToken">Cancels before the collection.</param>
    /// <returns>The blocks and bytes deleted, in total and per volume.</returns>
    /// <exception cref="VolumeNotFoundException">A volume was named and no volume has that ID.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<CollectResult> DeleteUnreferencedBlocksAsync(long? volumeId = null, CancellationToken cancellationToken = default);

    /// <summary>Registers a remote volume. Counts as one write.</summary>
    /// <param name="name">Its unique name (for example the remote file name): 1 to 1,024 characters of valid UTF-16 (no unpaired surrogate), with no control character and no whitespace at either end; stored and compared exactly as given.</param>
    /// <param name="state">Its state now: <see cref="VolumeState.Temporary"/> (the default), <see cref="VolumeState.Uploading"/>, <see cref="VolumeState.Uploaded"/> or <see cref="VolumeState.Verified"/>; a volume reaches <see cref="VolumeState.Deleting"/> and <see cref="VolumeState.Deleted"/> through <see cref="SetVolumeStateAsync"/>.</param>
    /// <param name="cancellationToken">Cancels before the write.</param>
    /// <returns>The new volume's ID.</returns>
    /// <exception cref="ArgumentException">The name is null, or not a name as described above.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The state is not defined, or is <see cref="VolumeState.Deleting"/> or <see cref="VolumeState.Deleted"/>.</exception>
    /// <exception cref="BlockDbConflictException">A volume with that name exists.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary, CancellationToken cancellationToken = default);

    /// <summary>
    /// Moves a volume to another state and records its size. Allowed: forward along Temporary → Uploading → Uploaded →
    /// Verified (steps may be skipped); from those to <see cref="VolumeState.Deleting"/> once no blockset references its
    /// blocks; from Deleting to <see cref="VolumeState.Deleted"/> once it holds no block; to its own state (to set the size).
    /// Counts as one write.
    /// </summary>
    /// <param name="volumeId">The volume.</param>
    /// <param name="state">The new state.</param>
    /// <param name="size">The remote file's size in bytes, or <see langword="null"/> to keep the one recorded.</param>
    /// <param name="cancellationToken">Cancels before the write.</param>
    /// <returns>A task that completes when the change is in the batch (a session) or committed (the shared session).</returns>
    /// <exception cref="ArgumentException">The state is not defined, or the size is negative.</exception>
    /// <exception cref="VolumeNotFoundException">No volume has that ID.</exception>
    /// <exception cref="BlockDbConflictException">The transition is not allowed, or the volume still holds referenced blocks (to <see cref="VolumeState.Deleting"/>) or any block (to <see cref="VolumeState.Deleted"/>).</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size = null, CancellationToken cancellationToken = default);

    /// <summary>Moves blocks to another volume (compaction repacks live blocks into new volumes). All of them move, or none. Counts as one write.</summary>
    /// <param name="blockIds">The blocks to move.</param>
    /// <param name="toVolumeId">The volume they move to; it must exist and not be <see cref="VolumeState.Deleting"/> or <see cref="VolumeState.Deleted"/>.</param>
    /// <param name="cancellationToken">Checked before and between blocks.</param>
    /// <returns>How many blocks were moved (a block already in that volume counts).</returns>
    /// <exception cref="ArgumentNullException">The list is null.</exception>
    /// <exception cref="BlockNotFoundException">A block is not in the index (its position in the list); nothing was moved.</exception>
    /// <exception cref="VolumeNotFoundException">No volume has that ID.</exception>
    /// <exception cref="BlockDbConflictException">The volume is being deleted or is deleted.</exception>
    /// <exception cref="OperationCanceledException">Cancelled; nothing was moved.</exception>
    /// <exception cref="BlockDbReadOnlyException">The database is read-only.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken = default);
}
