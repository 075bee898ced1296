using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.Layouts.Indexed;

/// <summary>
/// The layouts that find blocks through SQLite's unique (Hash, Size) index, <see cref="BlockLayout.TextHash"/> and
/// <see cref="BlockLayout.BlobHash"/>, for one session, from the session's call to the statement step: they differ only
/// in <typeparamref name="TCodec"/>, and select-xor-insert runs the configured <typeparamref name="TStrategy"/>. All are
/// structs, so the JIT compiles one specialised copy per combination. The unique index keeps the file free of
/// duplicates here. A new block's ID stays above every collected one [ID1] (<see cref="BindNewBlock"/>).
/// </summary>
internal readonly struct IndexedSession<TCodec, TStrategy> : ILayoutSession
    where TCodec : struct, IHashCodec
    where TStrategy : struct, ISelectXorInsertStrategy<TStrategy>
{
    private readonly ISqliteConnection _connection;
    private readonly ISqliteStatement _find;
    private readonly ISqliteStatement _findWithVolume;
    private readonly ISqliteStatement _insert;
    private readonly TStrategy _strategy;
    private readonly VolumeGuard _volumes;
    private readonly CollectedFloor _floor;

    public IndexedSession(ISqliteConnection connection, SqliteTransaction transaction, VolumeGuard volumes)
    {
        Transaction = transaction;
        _connection = connection;
        _volumes = volumes;
        _find = connection.Prepare(BlockDbSql.FindBlock);
        _findWithVolume = connection.Prepare(BlockDbSql.FindBlockWithVolume);
        _insert = connection.Prepare(BlockDbSql.InsertBlock);
        _floor = new CollectedFloor(connection, transaction);
        _strategy = TStrategy.Prepare(connection);
    }

    /// <summary>The session's write transaction.</summary>
    public SqliteTransaction Transaction { get; }

    // The members that take a block `in` are explicit: an implicit one gets a compiler bridge (one more frame).
    long? ILayoutSession.Find(in BlockKey block) => Find(block);

    /// <summary>The block's ID through the unique index, or null.</summary>
    public long? Find(in BlockKey block)
    {
        TCodec.Bind(_find, 1, block.Hash);
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

    SelectXorInsertResult ILayoutSession.SelectXorInsert(in BlockKey block, long? volumeId) => _strategy.SelectXorInsert(this, block, volumeId);

    long? ILayoutSession.FindInWrite(in BlockKey block, out BlockVolume volume)
    {
        Transaction.RequireOpen();
        return BlockVolume.Find<TCodec>(_findWithVolume, block, out volume);
    }

    SelectXorInsertResult ILayoutSession.InsertMissingInWrite(in BlockKey block, long? volumeId, out BlockVolume volume)
    {
        // Under the write lock nothing else can store the block since its lookup: a plain insert, its volume checked by it.
        Transaction.RequireOpen();
        var id = InsertRow(block, volumeId);
        Transaction.Wrote();
        volume = BlockVolume.Checked;
        return new SelectXorInsertResult(id, true);
    }

    public BlockHash ReadBinaryHash(ISqliteStatement statement, int column) => TCodec.ReadBinary(statement, column);

    /// <summary>
    /// Checks the volume (inside the write transaction) and binds a new block's hash, size, volume and ID as parameters
    /// 1 to 4 of an insert: the ID is NULL (SQLite chooses) unless the collected high-water mark is above every ID [ID1].
    /// </summary>
    public void BindNewBlock(ISqliteStatement insert, in BlockKey block, long? volumeId)
    {
        _volumes.RequireRecordable(volumeId);
        TCodec.Bind(insert, 1, block.Hash);
        insert.BindInt64(2, block.Size);
        if (volumeId is { } volume)
        {
            insert.BindInt64(3, volume);
        }
        else
        {
            insert.BindNull(3);
        }

        if (_floor.AboveMax() is { } floor)
        {
            insert.BindInt64(4, floor + 1);
        }
        else
        {
            insert.BindNull(4);
        }
    }

    /// <summary>Inserts a block inside the open write transaction and returns its ID (<c>SQLITE_CONSTRAINT</c> when it exists).</summary>
    public long InsertRow(in BlockKey block, long? volumeId)
    {
        BindNewBlock(_insert, block, volumeId);
        _insert.ExecuteNonQuery();
        _floor.Created();
        return _connection.LastInsertRowId;
    }

    /// <summary>
    /// Runs an insert that does nothing when the block exists (<c>INSERT OR IGNORE</c>, whose new row's ID is
    /// <c>last_insert_rowid()</c>, or <c>ON CONFLICT DO NOTHING RETURNING "ID"</c> when <paramref name="returnsId"/>) in
    /// the write transaction, and finds the block's ID when the insert did not give it. Counts a write only when the
    /// insert created the block.
    /// </summary>
    /// <exception cref="BlockDbException">The insert did nothing yet the block is not there: the index and the table disagree.</exception>
    public SelectXorInsertResult InsertThenFind(ISqliteStatement insert, bool returnsId, in BlockKey block, long? volumeId)
    {
        // One INSERT (the finds only read): on a caller's connection no step savepoint around it [X1].
        Transaction.BeginForOneWrite();
        return Insert(insert, returnsId, block, volumeId) is { } id
            ? new SelectXorInsertResult(id, true)
            : new SelectXorInsertResult(Find(block) ?? throw Disagree(block), false);
    }

    /// <summary>Runs an insert that does nothing when the block exists: the new block's ID (its write counted), or null.</summary>
    private long? Insert(ISqliteStatement insert, bool returnsId, in BlockKey block, long? volumeId)
    {
        BindNewBlock(insert, block, volumeId);
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
            created = insert.ExecuteNonQuery() > 0 ? _connection.LastInsertRowId : null;
        }

        if (created is { } id)
        {
            _floor.Created();
            Transaction.Wrote();
        }

        return created;
    }

    private static BlockDbException Disagree(in BlockKey block) =>
        new($"Block ({block.Hash}, {block.Size} bytes) conflicted on insert but is not found: the file's unique index and its table disagree; run CheckAsync.");
}
