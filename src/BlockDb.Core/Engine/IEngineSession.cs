namespace BlockDb.Engine;

/// <summary>
/// One engine connection, as <see cref="BlockSession{TEngine}"/> calls it: inside the session's call scope, one call at
/// a time [G1], with the input already checked (<see cref="Require"/>). Writes open the
/// engine's write transaction when they need it and count themselves; <see cref="CommitPolicy"/> decides when to commit
/// [B1]-[B3]. Implemented by structs, so each <see cref="BlockSession{TEngine}"/> is compiled for its engine and
/// calls it without a virtual call. Every operation returns a <see cref="ValueTask"/>: SQLite's engine completes it
/// synchronously (<c>new ValueTask&lt;T&gt;(value)</c>, no allocation, and a failure thrown, not stored), PostgreSQL's
/// after its round trip. The engine maps its errors (keeping the SQLite result code or SQLSTATE) and, when it ended the
/// write transaction on its own, leaves that to <see cref="EngineTransaction.EndedByEngine"/> [B2].
/// </summary>
internal interface IEngineSession
{
    /// <summary>The block's ID, or null when the engine sees no such block (complete: never a miss for a visible block).</summary>
    /// <param name="block">The block, its hash decoded.</param>
    /// <param name="cancellationToken">The call's token (an engine passes it on where a cancelled statement loses nothing).</param>
    ValueTask<long?> FindBlockAsync(in BlockKey block, CancellationToken cancellationToken);

    /// <summary>Finds the block, inserting it when absent (recorded in <paramref name="volumeId"/>).</summary>
    ValueTask<SelectXorInsertResult> SelectXorInsertAsync(in BlockKey block, long? volumeId, CancellationToken cancellationToken);

    /// <summary>Select-xor-insert of each block, its result at the same index; how many it created.</summary>
    ValueTask<int> SelectXorInsertManyAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, CancellationToken cancellationToken);

    /// <summary>A file in one call: its blocks' select-xor-insert, then the blockset from them.</summary>
    ValueTask<long> AddBlocksetAsync(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash, long? volumeId, CancellationToken cancellationToken);

    /// <summary>A bulk import's blockset: false when one with its full hash and length exists (nothing written).</summary>
    ValueTask<bool> ImportBlocksetAsync(IReadOnlyList<BlockKey> blocks, string? fullHash, long length, CancellationToken cancellationToken);

    ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken);

    ValueTask<long?> FindBlocksetAsync(BlockHash fullHash, long length, CancellationToken cancellationToken);

    ValueTask<BlocksetInfo> GetBlocksetAsync(long blocksetId, CancellationToken cancellationToken);

    /// <summary>Up to <paramref name="into"/>'s length of a blockset's blocks from <paramref name="fromIndex"/> on, hashes as bytes; how many.</summary>
    ValueTask<int> ListBlocksetBlocksAsync(long blocksetId, int fromIndex, Memory<BlocksetBlock> into, CancellationToken cancellationToken);

    ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken);

    ValueTask<CollectResult> CollectAsync(long? volumeId, CancellationToken cancellationToken);

    ValueTask<long> RegisterVolumeAsync(string name, VolumeState state, CancellationToken cancellationToken);

    ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size, CancellationToken cancellationToken);

    ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken);

    ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken);

    ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken);

    ValueTask<BlockDbCounts> GetCountsAsync(CancellationToken cancellationToken);

    /// <summary>Commits the open transaction, if any; else ends the read transaction [B3].</summary>
    ValueTask CommitAsync();

    /// <summary>Rolls the open transaction back, if any; else abandons the read transaction.</summary>
    ValueTask RollbackAsync();

    /// <summary>The connection's page-cache counters, or null when the engine has none (synchronous: a gauge reads it).</summary>
    SqliteCacheStats? ReadCacheStats();

    /// <summary>Closes the connection (finalizing its statements); after the policy ended the batch.</summary>
    ValueTask CloseAsync();
}
