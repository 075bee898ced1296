using BlockDb.Drivers;
using BlockDb.Sessions;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.Layouts.Indexed;

/// <summary>
/// A session's store for the layouts that find blocks through SQLite's unique (Hash, Size) index,
/// <see cref="BlockLayout.TextHash"/> and <see cref="BlockLayout.BlobHash"/>: they differ only in
/// <typeparamref name="TCodec"/>, and select-xor-insert runs the configured <typeparamref name="TStrategy"/>. Both are
/// structs, so the JIT compiles one specialised, devirtualised copy per combination. The unique index is what keeps
/// the file free of duplicates here. SQLite gives a new row the highest ID + 1, which would hand a collected block's ID
/// to the next block; so the first insert of each transaction (and after a collection or a rolled-back savepoint in it) reads the collected
/// high-water mark, and while it is above every ID an insert takes it + 1 explicitly (<see cref="BindNewBlock"/>).
/// </summary>
internal sealed class IndexedBlockStore<TCodec, TStrategy> : IBlockStore
    where TCodec : struct, IHashCodec
    where TStrategy : struct, ISelectXorInsertStrategy<TStrategy>
{
    private readonly ISqliteStatement _find;
    private readonly ISqliteStatement _insert;
    private readonly TStrategy _strategy;

    private readonly VolumeGuard _volumes;
    private readonly ISqliteStatement _floor;
    private (long Transaction, long Revision) _floorReadAt = (-1, -1);
    private long? _floorAboveMax;

    public IndexedBlockStore(ISqliteConnection connection, SqliteTransaction batch, VolumeGuard volumes)
    {
        Batch = batch;
        _volumes = volumes;
        _find = connection.Prepare(BlockDbSql.FindBlock);
        _insert = connection.Prepare(BlockDbSql.InsertBlock);
        _floor = connection.Prepare(BlockDbSql.BlockIdFloor.AboveMax);
        _strategy = TStrategy.Prepare(connection);
        batch.Attach(this);
    }

    /// <summary>The session's write batch.</summary>
    public SqliteTransaction Batch { get; }

    public long? Find(in HashInput hash, long size)
    {
        TCodec.Bind(_find, 1, hash);
        _find.BindInt64(2, size);
        try
        {
            return _find.Step() ? _find.ColumnInt64(0) : null;
        }
        finally
        {
            _find.Reset();
        }
    }

    public SelectXorInsertResult SelectXorInsert(in HashInput hash, long size, long? volumeId) => _strategy.SelectXorInsert(this, hash, size, volumeId);

    public SelectXorInsertResult SelectXorInsertInWrite(in HashInput hash, long size, long? volumeId, out BlockVolume volume)
    {
        Batch.RequireOpen();
        var result = SelectXorInsert(hash, size, volumeId);

        // The index lookup reads no VolumeID: a found block's volume is left to the blockset's own read.
        volume = result.Created ? BlockVolume.Checked : BlockVolume.Unknown;
        return result;
    }

    public long Insert(in HashInput hash, long size, long? volumeId) => Batch.Write((this, hash, size, volumeId), static s =>
    {
        var id = s.Item1.InsertRow(s.hash, s.size, s.volumeId);
        s.Item1.Batch.Wrote();
        return id;
    });

    public string ReadHash(ISqliteStatement statement, int column) => TCodec.Read(statement, column);

    /// <summary>
    /// Checks the volume (inside the write transaction) and binds a new block's hash, size, volume and ID as parameters
    /// 1 to 4 of an insert: the ID is NULL (SQLite chooses) unless the collected high-water mark is above every ID.
    /// </summary>
    public void BindNewBlock(ISqliteStatement insert, in HashInput hash, long size, long? volumeId)
    {
        _volumes.RequireRecordable(volumeId);
        TCodec.Bind(insert, 1, hash);
        insert.BindInt64(2, size);
        if (volumeId is { } volume)
        {
            insert.BindInt64(3, volume);
        }
        else
        {
            insert.BindNull(3);
        }

        if (FloorAboveMax() is { } floor)
        {
            insert.BindInt64(4, floor + 1);
        }
        else
        {
            insert.BindNull(4);
        }
    }

    /// <summary>After an insert that created a block: its ID is above the high-water mark, so SQLite's own choice is safe until the next collection.</summary>
    private void Created() => _floorAboveMax = null;

    /// <summary>
    /// The collected high-water mark while it is above every block ID, read under the write lock once per transaction
    /// and again after each collection or rolled-back savepoint of this session (no other writer can insert or collect until the transaction ends).
    /// </summary>
    private long? FloorAboveMax()
    {
        var at = (Batch.Transaction, Batch.Revision);
        if (_floorReadAt == at)
        {
            return _floorAboveMax;
        }

        try
        {
            _floorAboveMax = _floor.Step() ? _floor.ColumnInt64(0) : null;
        }
        finally
        {
            _floor.Reset();
        }

        _floorReadAt = at;
        return _floorAboveMax;
    }

    /// <summary>Inserts a block inside the open batch and returns its ID (<c>SQLITE_CONSTRAINT</c> when it exists).</summary>
    public long InsertRow(in HashInput hash, long size, long? volumeId)
    {
        BindNewBlock(_insert, hash, size, volumeId);
        try
        {
            _insert.Step();
            Created();
            return _insert.ColumnInt64(0);
        }
        finally
        {
            _insert.Reset();
        }
    }

    /// <summary>
    /// Runs an insert that does nothing when the block exists (<c>INSERT OR IGNORE</c>, or <c>ON CONFLICT DO NOTHING
    /// RETURNING "ID"</c> when <paramref name="returnsId"/>), in the batch, and finds the block's ID when the insert did
    /// not give it. Counts a write only when the insert created the block.
    /// </summary>
    /// <exception cref="BlockDbException">The insert did nothing yet the block is not there: the index and the table disagree.</exception>
    public SelectXorInsertResult InsertThenFind(ISqliteStatement insert, bool returnsId, in HashInput hash, long size, long? volumeId) =>
        Batch.Write((this, insert, returnsId, hash, size, volumeId), static s =>
        {
            var (store, insert, returnsId, hash, size, volumeId) = s;
            store.BindNewBlock(insert, hash, size, volumeId);
            long? created;
            if (returnsId)
            {
                try
                {
                    created = insert.Step() ? insert.ColumnInt64(0) : null;
                }
                finally
                {
                    insert.Reset();
                }
            }
            else
            {
                created = insert.ExecuteNonQuery() > 0 ? store.Find(hash, size) : null;
            }

            if (created is not null)
            {
                store.Created();
            }

            var result = created is { } id
                ? new SelectXorInsertResult(id, true)
                : new SelectXorInsertResult(store.Find(hash, size) ?? throw new BlockDbException($"Block ({hash}, {size} bytes) conflicted on insert but is not found: the file's unique index and its table disagree; run CheckAsync."), false);
            if (result.Created)
            {
                store.Batch.Wrote();
            }

            return result;
        });

    void IBatchParticipant.BeforeCommit()
    {
    }

    void IBatchParticipant.AfterCommit()
    {
    }

    void IBatchParticipant.AfterRollback()
    {
    }

    // Nothing of a rolled-back savepoint is kept here: the collected high-water mark is read again (the batch's Revision moved).
    long IBatchParticipant.SavepointMark => 0;

    void IBatchParticipant.AfterRollbackTo(long mark)
    {
    }
}
