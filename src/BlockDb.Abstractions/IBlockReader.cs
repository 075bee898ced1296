namespace BlockDb;

/// <summary>
/// The read calls of a block index, the same on a session (<see cref="IBlockSession"/>) and on the shared
/// session (<see cref="ISharedBlockSession"/>): code that only reads can take either.
/// </summary>
/// <remarks>
/// Every call checks its <see cref="CancellationToken"/> first. A block is named by its <see cref="BlockKey"/> (hash bytes
/// and size); a blockset's full hash text is standard base64 with <c>=</c> padding. Invalid input throws
/// <see cref="ArgumentException"/> (or its <see cref="ArgumentNullException"/> and <see cref="ArgumentOutOfRangeException"/>
/// subtypes) before anything runs. A session sees its own uncommitted writes; the shared session's readers see
/// committed data only.
/// </remarks>
public interface IBlockReader
{
    /// <summary>Finds a block's ID by its key (hash and size).</summary>
    /// <param name="block">The block's key; from Duplicati's base64 text, <see cref="BlockKey.Parse"/>.</param>
    /// <param name="cancellationToken">Cancels before the lookup.</param>
    /// <returns>The ID, or <see langword="null"/> when no such block exists.</returns>
    /// <exception cref="ArgumentException"><paramref name="block"/> is <c>default(BlockKey)</c>.</exception>
    /// <exception cref="ObjectDisposedException">The session or shared session was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<long?> FindBlockAsync(BlockKey block, CancellationToken cancellationToken = default);

    /// <summary>
    /// Lists a blockset's blocks from <paramref name="fromIndex"/> on, in <c>Index</c> order (the join of <c>BlocksetEntry</c>
    /// and <c>Block</c>), into the caller's buffer with binary hashes: the listing allocates nothing per block. Fewer blocks than <paramref name="into"/> holds means the
    /// blockset ends there; to read a blockset of any length, call again from the last index + 1 until it does.
    /// </summary>
    /// <param name="blocksetId">The blockset ID.</param>
    /// <param name="fromIndex">The first <c>Index</c> to list (0 for the start).</param>
    /// <param name="into">Receives the blocks; at least one element.</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>How many blocks were written to the start of <paramref name="into"/> (0 when the blockset has none from <paramref name="fromIndex"/> on).</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fromIndex"/> is negative, or <paramref name="into"/> is empty.</exception>
    /// <exception cref="BlocksetNotFoundException">No blockset has that ID.</exception>
    /// <exception cref="ObjectDisposedException">The session or shared session was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<int> ListBlocksetBlocksAsync(long blocksetId, int fromIndex, Memory<BlocksetBlock> into, CancellationToken cancellationToken = default);

    /// <summary>Gets a blockset's length in bytes, full hash and block count.</summary>
    /// <param name="blocksetId">The blockset ID.</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The blockset.</returns>
    /// <exception cref="BlocksetNotFoundException">No blockset has that ID.</exception>
    /// <exception cref="ObjectDisposedException">The session or shared session was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default);

    /// <summary>Counts blocks, blocksets and blockset entries (rows).</summary>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The counts.</returns>
    /// <exception cref="ObjectDisposedException">The session or shared session was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken = default);

    /// <summary>Gets a block by ID: its hash, size and volume.</summary>
    /// <param name="blockId">The block ID.</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The block.</returns>
    /// <exception cref="BlockNotFoundException">No block has that ID.</exception>
    /// <exception cref="ObjectDisposedException">The session or shared session was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Finds a blockset by the hash of the whole content and its length in bytes, so an unchanged file reuses its
    /// blockset; the lowest ID when several match. A zero-length file matches the empty blockset with its hash.
    /// </summary>
    /// <param name="fullHash">The hash of the whole content (from Duplicati's base64 text: <see cref="BlockHash.Parse"/>).</param>
    /// <param name="length">The content's length in bytes (0 or more).</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The blockset's ID, or <see langword="null"/> when none matches.</returns>
    /// <exception cref="ArgumentException">The hash is empty (<c>default(BlockHash)</c>); <see cref="ArgumentOutOfRangeException"/> when the length is negative.</exception>
    /// <exception cref="ObjectDisposedException">The session or shared session was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<long?> FindBlocksetAsync(BlockHash fullHash, long length, CancellationToken cancellationToken = default);

    /// <summary>Gets a volume: its name, state, size, and the blocks and bytes it holds, referenced or not.</summary>
    /// <param name="volumeId">The volume ID.</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The volume.</returns>
    /// <exception cref="VolumeNotFoundException">No volume has that ID.</exception>
    /// <exception cref="ObjectDisposedException">The session or shared session was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken = default);

    /// <summary>Finds a volume by its name.</summary>
    /// <param name="name">The volume's name.</param>
    /// <param name="cancellationToken">Cancels before the query.</param>
    /// <returns>The volume, or <see langword="null"/> when none has that name.</returns>
    /// <exception cref="ArgumentException">The name is null, or not one <see cref="IBlockWriter.RegisterVolumeAsync"/> accepts (so no volume can have it).</exception>
    /// <exception cref="ObjectDisposedException">The session or shared session was disposed.</exception>
    /// <exception cref="BlockDbException">The database failed.</exception>
    ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken = default);
}
