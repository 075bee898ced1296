namespace BlockDb.Engine;

/// <summary>
/// One engine connection, as <see cref="BlockSession{TEngine}"/> calls it: inside the session's call scope, one call at
/// a time [G1], with the input already checked (<see cref="Require"/>) and a text hash already decoded. Writes open the
/// engine's write transaction when they need it and count themselves; <see cref="CommitPolicy"/> decides when to commit
/// [B1]-[B3]. Implemented by structs (D6), so each <see cref="BlockSession{TEngine}"/> is compiled for its engine and
/// calls it without a virtual call. SQLite's engine completes every call synchronously, so the members return plain
/// values; the PostgreSQL engine joins in S2.3.
/// </summary>
internal interface IEngineSession
{
    /// <summary>The block's ID, or null when the engine sees no such block (complete: never a miss for a visible block).</summary>
    /// <param name="block">The block, its hash decoded.</param>
    /// <param name="text">The caller's hash text when it gave one (checked, canonical), else null: a layout that stores the text binds it as given.</param>
    long? FindBlock(in BinaryBlockKey block, string? text);

    /// <summary>Finds the block, inserting it when absent (recorded in <paramref name="volumeId"/>).</summary>
    SelectXorInsertResult SelectXorInsert(in BinaryBlockKey block, string? text, long? volumeId);

    /// <summary>Inserts a block that must be new (<c>SQLITE_CONSTRAINT</c> when it exists).</summary>
    long InsertBlock(in BinaryBlockKey block, string? text, long? volumeId);

    /// <summary>Select-xor-insert of each block, its result at the same index; how many it created.</summary>
    int SelectXorInsertMany(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, CancellationToken cancellationToken);

    /// <summary>A file in one call: its blocks' select-xor-insert, then the blockset from them.</summary>
    long SelectXorInsertBlockset(ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, string? fullHash, long? volumeId, CancellationToken cancellationToken);

    /// <summary>Adds a blockset from blocks named by hash and size.</summary>
    long AddBlockset(IReadOnlyList<BlockKey> blocks, string? fullHash, CancellationToken cancellationToken);

    /// <summary>Adds a blockset from block IDs.</summary>
    long AddBlockset(IReadOnlyList<long> blockIds, string? fullHash, CancellationToken cancellationToken);

    /// <summary>A bulk import's blockset: false when one with its full hash and length exists (nothing written).</summary>
    bool ImportBlockset(IReadOnlyList<BinaryBlockKey> blocks, string? fullHash, long length, CancellationToken cancellationToken);

    BlockInfo GetBlock(long blockId);

    long? FindBlockset(string fullHash, long length);

    BlocksetInfo GetBlockset(long blocksetId);

    IReadOnlyList<BlocksetBlock> ListBlocksetBlocks(long blocksetId);

    void DeleteBlockset(long blocksetId);

    CollectResult Collect(long? volumeId);

    long RegisterVolume(string name, VolumeState state);

    void SetVolumeState(long volumeId, VolumeState state, long? size);

    long MoveBlocks(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken);

    VolumeInfo GetVolume(long volumeId);

    VolumeInfo? FindVolume(string name);

    BlockDbCounts GetCounts();

    /// <summary>Commits the open transaction, if any; else ends the read transaction [B3].</summary>
    void Commit();

    /// <summary>Rolls the open transaction back, if any; else abandons the read transaction.</summary>
    void Rollback();

    /// <summary>The connection's page-cache counters, or null when the engine has none.</summary>
    SqliteCacheStats? ReadCacheStats();

    /// <summary>Closes the connection (finalizing its statements); after the policy ended the batch.</summary>
    void Close();
}
