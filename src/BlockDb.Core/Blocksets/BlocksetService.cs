using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Layouts;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.Blocksets;

/// <summary>
/// A session's blockset reads and writes, the same for every layout: blocks are found through the layout's
/// <see cref="ILayoutSession"/>, and a blockset is written with its entries as one unit (all of it or nothing).
/// Used only inside the session's gate.
/// </summary>
internal sealed partial class BlocksetService
{
    private readonly ISqliteConnection _connection;
    private readonly SqliteTransaction _batch;
    private readonly ILayoutSession _layout;
    private readonly VolumeGuard _volumes;
    private readonly ISqliteStatement _blockSize;
    private readonly ISqliteStatement _insertBlockset;
    private readonly ISqliteStatement _insertEntry;
    private ISqliteStatement? _insertEntries;
    private readonly ISqliteStatement _getBlockset;
    private readonly ISqliteStatement _list;
    private readonly IBlockRowStatement? _listRows;
    private readonly ISqliteStatement _find;
    private readonly ISqliteStatement _deleteEntries;
    private readonly ISqliteStatement _delete;
    private readonly ISqliteStatement _getBlock;
    private readonly IdFloor? _floor;
    private readonly IBlocksetRules? _rules;

    /// <summary>The layout's blockset rules, or null.</summary>
    internal IBlocksetRules? Rules => _rules;

    /// <summary>When the session closes: releases the layout's rules (their statements go with the connection).</summary>
    public void Close() => _rules?.Dispose();

    /// <param name="connection">The session's connection.</param>
    /// <param name="batch">The session's write batch.</param>
    /// <param name="layout">The layout's session (boxed once: the blockset calls are not the block hot path).</param>
    /// <param name="volumes">The session's volume checks.</param>
    /// <param name="sql">The layout's statements.</param>
    /// <param name="rules">The layout's own blockset rules, or null.</param>
    /// <param name="textHashes">Whether the layout stores a hash as its base64 text (<see cref="LayoutDefinition.TextHashes"/>; else its bytes, which a listing reads as they are).</param>
    public BlocksetService(ISqliteConnection connection, SqliteTransaction batch, ILayoutSession layout, VolumeGuard volumes, SessionSql sql, IBlocksetRules? rules, bool textHashes)
    {
        _rules = rules;
        _connection = connection;
        _batch = batch;
        _layout = layout;
        _volumes = volumes;
        _blockSize = connection.Prepare(BlockDbSql.GetBlockSizeAndVolumeState);
        _insertBlockset = connection.Prepare(sql.InsertBlockset);
        _insertEntry = connection.Prepare(BlockDbSql.InsertBlocksetEntry);
        _getBlockset = connection.Prepare(BlockDbSql.GetBlockset);
        _list = connection.Prepare(BlockDbSql.ListBlocksetBlocksFrom);
        _listRows = textHashes ? null : _list as IBlockRowStatement;
        _find = connection.Prepare(BlockDbSql.FindBlockset);
        _deleteEntries = connection.Prepare(BlockDbSql.DeleteBlocksetEntries);
        _delete = connection.Prepare(BlockDbSql.DeleteBlockset);
        _getBlock = connection.Prepare(sql.GetBlock);
        _floor = sql.BlocksetIdFloor is { } floor ? new IdFloor(connection, floor) : null;
    }

    /// <summary>
    /// A file in one call: select-xor-insert of each block (its result at the same index, new blocks recorded in
    /// <paramref name="volumeId"/>), then the blockset from them, all in one write transaction that no commit splits.
    /// Every block is looked up and every check made before the first write (a found block is one read with its volume's
    /// state, or KeyMap's verification with its VolumeID, so a block's row is read again only to refuse a going volume or
    /// for a block Duplicati took back); then each missing block is inserted once and the blockset written; the layout's
    /// rules take the keys as matched. The call is whole: a refusal or a cancellation comes before any write; a failure
    /// among the writes rolls the open batch back (<see cref="SqliteTransaction.WholeOrBatch"/>), or undoes them with
    /// their savepoint where they may still refuse (Duplicati's layout, until the file's volume is found fit in the
    /// transaction), so the caller, who reads nothing from a call that threw, never misses a block it created.
    /// </summary>
    /// <exception cref="BlockDbConflictException">A found block's volume is Deleting or Deleted; nothing of the call was written.</exception>
    /// <exception cref="BlockDbBatchRolledBackException">A write failed after every check passed; the open batch was rolled back.</exception>
    public long SelectXorInsertAdd(ReadOnlyMemory<BlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, string? fullHash, CancellationToken cancellationToken) =>
        _batch.Write(new OneCallFile(this, blocks, results, volumeId, fullHash, cancellationToken), static file =>
        {
            var blocksetId = file.Run();
            file.Self._batch.Wrote();
            return blocksetId;
        });

    /// <summary>Deletes a blockset and its entries (all or nothing) and counts one write.</summary>
    /// <exception cref="BlocksetNotFoundException">No blockset has that ID; nothing was written.</exception>
    public void Delete(long blocksetId) => _batch.Write((this, blocksetId), static s =>
    {
        var (self, id) = s;
        self._batch.AllOrNothing((self, id), static d =>
        {
            d.self._rules?.Deleting(d.id);
            d.self._deleteEntries.BindInt64(1, d.id);
            d.self._deleteEntries.ExecuteNonQuery();
            d.self._delete.BindInt64(1, d.id);
            _ = d.self._delete.ExecuteNonQuery() > 0 ? true : throw new BlocksetNotFoundException(d.id);
            d.self._floor?.Raise(d.id); // the highest blockset's ID is never handed out again (BlockDbSql.IdFloorSql)
            return true;
        });
        self._batch.Wrote();
        return true;
    });
}
