using BlockDb.Drivers;
using BlockDb.Layouts.Indexed;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.Layouts.Duplicati;

/// <summary>
/// The hot path of a session on a Duplicati database, as Duplicati's <c>AddBlockAsync</c> does it (facts §4.2, §4.6):
/// find the block through the unique <c>BlockHashSize</c> index; on a miss, take it back from <c>DeletedBlock</c> when a
/// live Blocks volume still holds its bytes (a new ID, the old volume, not created: nothing to upload) [DQ2]; else insert
/// it into the caller's volume, which must be a Blocks volume in Temporary…Verified [DQ2]. Every new block has a volume
/// (never −1), a size of at most the file's block size and a hash of its <c>blockhash</c> size. Standalone, the lookup
/// runs in the read transaction and the rest under the write lock (a block another writer stored meanwhile is found
/// through the unique index refusing the insert, as <see cref="SelectThenInsert"/>); in External mode all of it runs in
/// the caller's transaction. A struct of references, so <see cref="SqliteSession{TLayout}"/> calls it directly.
/// </summary>
internal readonly struct DuplicatiSession : ILayoutSession
{
    private readonly ISqliteStatement _find;
    private readonly ISqliteStatement _findWithVolume;
    private readonly ISqliteStatement _insert;
    private readonly ISqliteStatement _findDeleted;
    private readonly ISqliteStatement _afterMiss;
    private readonly ISqliteStatement _takeBack;
    private readonly ISqliteStatement _dropDeleted;
    private readonly ISqliteConnection _connection;
    private readonly VolumeGuard _volumes;
    private readonly DuplicatiFile _file;

    public DuplicatiSession(SqliteServices services, DuplicatiFile file)
    {
        var connection = _connection = services.Connection;
        Transaction = services.Transaction;
        _volumes = services.VolumeGuard;
        _file = file;
        _find = connection.Prepare(BlockDbSql.FindBlock);
        _findWithVolume = connection.Prepare(BlockDbSql.FindBlockWithVolume);
        _insert = connection.Prepare(BlockDbSql.DuplicatiInsertBlock);
        _findDeleted = connection.Prepare(BlockDbSql.DuplicatiFindDeletedBlock);
        _afterMiss = connection.Prepare(BlockDbSql.DuplicatiAfterMiss);
        _takeBack = connection.Prepare(BlockDbSql.DuplicatiTakeBackBlock);
        _dropDeleted = connection.Prepare(BlockDbSql.DuplicatiDropDeletedBlock);
    }

    /// <summary>The session's write transaction (External: the call's step in the caller's transaction).</summary>
    public SqliteTransaction Transaction { get; }

    // The members that take a block `in` are explicit: an implicit one gets a compiler bridge (one more frame).
    long? ILayoutSession.Find(in BlockKey block) => Find(block);

    SelectXorInsertResult ILayoutSession.SelectXorInsert(in BlockKey block, long? volumeId)
    {
        RequireNew(block, volumeId);
        Transaction.EnterRead();
        if (Find(block) is { } found)
        {
            return new SelectXorInsertResult(found, false);
        }

        // One atomic write follows (the insert, or the take-back in its own savepoint): no step savepoint around it.
        Transaction.BeginForOneWrite();
        return AfterMiss(block, volumeId);
    }

    long? ILayoutSession.FindInWrite(in BlockKey block, out BlockVolume volume)
    {
        // Its volume's state read with the row: the blockset reads it again only to refuse a going volume.
        Transaction.RequireOpen();
        return BlockVolume.Find<TextHashCodec>(_findWithVolume, block, out volume);
    }

    SelectXorInsertResult ILayoutSession.InsertMissingInWrite(in BlockKey block, long? volumeId, out BlockVolume volume)
    {
        // The span call refused what the file cannot hold up front, for every block (LayoutState.RequireNewBlocks).
        Transaction.RequireOpen();

        // A created block's volume was checked here; a taken-back one is read by the blockset.
        var result = AfterMiss(block, volumeId);
        volume = result.Created ? BlockVolume.Checked : BlockVolume.Unknown;
        return result;
    }

    public BlockHash ReadBinaryHash(ISqliteStatement statement, int column) => TextHashCodec.ReadBinary(statement, column);

    /// <summary>The block's ID through the unique (Hash, Size) index, or null.</summary>
    private long? Find(in BlockKey block)
    {
        TextHashCodec.Bind(_find, 1, block.Hash);
        _find.BindInt64(2, block.Size);
        try
        {
            return _find.Step() ? _find.ColumnInt64(0) : null;
        }
        finally
        {
            _find.Reset();
        }
    }

    /// <summary>
    /// Inside the write transaction, after a miss: the take-back, else the insert into the volume. When another writer
    /// stored the block since the miss (standalone), the unique index refuses the row and the block is found instead.
    /// </summary>
    private SelectXorInsertResult AfterMiss(in BlockKey block, long? volumeId)
    {
        try
        {
            if (FindDeleted(block, volumeId!.Value) is { } deleted)
            {
                // Two statements: in one savepoint (the AfterMiss catch below must not see half a move).
                var taken = Transaction.InSavepoint((this, deleted), static s => s.Item1.MoveBack(s.deleted));
                Transaction.Wrote();
                return new SelectXorInsertResult(taken, false);
            }

            var id = InsertRow(block, volumeId.Value);
            Transaction.Wrote();
            return new SelectXorInsertResult(id, true);
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Constraint)
        {
            if (Find(block) is not { } existing)
            {
                throw;
            }

            return new SelectXorInsertResult(existing, false);
        }
    }

    /// <summary>
    /// The <c>DeletedBlock</c> row to take back ([DQ2]: none from a Deleting or Deleted volume), or null; then the block is
    /// inserted into <paramref name="volumeId"/>, so it is checked here [DQ2]: with the lookup in one statement unless it
    /// was found fit earlier in this transaction. A take-back does not need the volume (the block keeps its old one).
    /// </summary>
    /// <exception cref="VolumeNotFoundException">No row to take back and no Blocks volume has that ID.</exception>
    /// <exception cref="BlockDbConflictException">No row to take back and the volume is being deleted or is deleted.</exception>
    private long? FindDeleted(in BlockKey block, long volumeId)
    {
        if (_volumes.IsRecordable(volumeId))
        {
            TextHashCodec.Bind(_findDeleted, 1, block.Hash);
            _findDeleted.BindInt64(2, block.Size);
            try
            {
                return _findDeleted.Step() ? _findDeleted.ColumnInt64(0) : null;
            }
            finally
            {
                _findDeleted.Reset();
            }
        }

        _afterMiss.BindInt64(1, volumeId);
        TextHashCodec.Bind(_afterMiss, 2, block.Hash);
        _afterMiss.BindInt64(3, block.Size);
        try
        {
            _afterMiss.Step();
            if (!_afterMiss.ColumnIsNull(1))
            {
                return _afterMiss.ColumnInt64(1);
            }

            _volumes.RequireRecordable(volumeId, _afterMiss, 0);
            return null;
        }
        finally
        {
            _afterMiss.Reset();
        }
    }

    /// <summary>Moves the block's <c>DeletedBlock</c> row back into <c>Block</c> (keeping its volume, which still holds the bytes); the caller's savepoint makes the two statements one.</summary>
    private long MoveBack(long deletedId)
    {
        long id;
        _takeBack.BindInt64(1, deletedId);
        try
        {
            _takeBack.Step();
            id = _takeBack.ColumnInt64(0);
        }
        finally
        {
            _takeBack.Reset();
        }

        _dropDeleted.BindInt64(1, deletedId);
        _dropDeleted.ExecuteNonQuery();
        return id;
    }

    /// <summary>Inserts the block into the volume (<c>SQLITE_CONSTRAINT</c> when it exists); the caller checked the volume in this transaction [DQ2].</summary>
    private long InsertRow(in BlockKey block, long volumeId)
    {
        TextHashCodec.Bind(_insert, 1, block.Hash);
        _insert.BindInt64(2, volumeId);
        _insert.BindInt64(3, block.Size);
        _insert.ExecuteNonQuery();
        return _connection.LastInsertRowId;
    }

    private void RequireNew(in BlockKey block, long? volumeId) => RequireNew(_file, block, volumeId);

    /// <summary>
    /// Refuses, before anything is read or written, a block Duplicati's file cannot hold or a call without a volume
    /// [DQ2]. The one rule for what a Duplicati file takes as a new block, for the single calls here and, up front for every
    /// block, for the span calls (<see cref="LayoutState.RequireNewBlocks"/>): a call without a volume is refused even
    /// when the block exists, as the single call refuses it.
    /// </summary>
    /// <exception cref="ArgumentException">No volume; a hash of another size than the file's <c>blockhash</c> gives.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A block larger than the file's <c>blocksize</c>.</exception>
    internal static void RequireNew(DuplicatiFile file, in BlockKey block, long? volumeId)
    {
        if (volumeId is null)
        {
            throw new ArgumentException(
                "The Duplicati layout records every new block in a volume (Duplicati's Block.VolumeID is NOT NULL): pass the ID of a Blocks volume in state Temporary, Uploading, Uploaded or Verified (RegisterVolumeAsync). Nothing was written.",
                nameof(volumeId));
        }

        if (block.Size > file.Blocksize)
        {
            throw new ArgumentOutOfRangeException(
                "size",
                block.Size,
                $"The block ({block.Hash}) is {block.Size:N0} bytes, larger than this Duplicati database's block size of {file.Blocksize:N0} bytes (Configuration 'blocksize'); Duplicati's next backup would refuse the file (BlockSizeChangeNotSupported). Allowed: 1 to {file.Blocksize:N0} bytes. Nothing was written.");
        }

        if (block.Hash.Length != file.BlockHashSize)
        {
            throw new ArgumentException(
                $"The block's hash ({block.Hash}) is {block.Hash.Length} bytes, but this Duplicati database hashes blocks with {file.BlockHashName} ({file.BlockHashSize} bytes, Configuration 'blockhash'). Nothing was written.",
                "hash");
        }
    }
}
