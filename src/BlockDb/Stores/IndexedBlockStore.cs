using BlockDb.Drivers;
using BlockDb.Sessions;

namespace BlockDb.Stores;

/// <summary>
/// The layouts that find blocks through SQLite's unique (Hash, Size) index, <see cref="BlockLayout.TextHash"/> and
/// <see cref="BlockLayout.BlobHash"/>, differing only in <typeparamref name="TCodec"/>. The unique index is what
/// keeps the file free of duplicates here; select-xor-insert uses the configured <see cref="SelectXorInsertStrategy"/>.
/// </summary>
internal sealed class IndexedBlockStore<TCodec> : IBlockStore
    where TCodec : struct, IHashCodec
{
    private readonly WriteBatch _batch;
    private readonly SelectXorInsertStrategy _strategy;
    private readonly ISqliteStatement _find;
    private readonly ISqliteStatement _insert;
    private readonly ISqliteStatement? _strategyInsert;

    public IndexedBlockStore(ISqliteConnection connection, WriteBatch batch, SelectXorInsertStrategy strategy)
    {
        _batch = batch;
        _strategy = strategy;
        _find = connection.Prepare(BlockDbSql.FindBlock);
        _insert = connection.Prepare(BlockDbSql.InsertBlock);
        _strategyInsert = strategy switch
        {
            SelectXorInsertStrategy.InsertOrIgnoreThenSelect => connection.Prepare(BlockDbSql.InsertBlockOrIgnore),
            SelectXorInsertStrategy.InsertReturningThenSelect => connection.Prepare(BlockDbSql.InsertBlockReturningUnlessExists),
            _ => null,
        };
        batch.Attach(this);
    }

    public long? Find(string hash, long size)
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

    public SelectXorInsertResult SelectXorInsert(string hash, long size) => _strategy switch
    {
        SelectXorInsertStrategy.InsertOrIgnoreThenSelect => _batch.Write((this, hash, size), static s => s.Item1.InsertOrIgnoreThenSelect(s.hash, s.size)),
        SelectXorInsertStrategy.InsertReturningThenSelect => _batch.Write((this, hash, size), static s => s.Item1.InsertReturningThenSelect(s.hash, s.size)),
        _ => Find(hash, size) is { } id
            ? new SelectXorInsertResult(id, false)
            : _batch.Write((this, hash, size), static s => s.Item1.InsertUnlessRaced(s.hash, s.size)),
    };

    public long Insert(string hash, long size) => _batch.Write((this, hash, size), static s =>
    {
        var id = s.Item1.InsertRow(s.hash, s.size);
        s.Item1._batch.EndWrite(wrote: true);
        return id;
    });

    public string ReadHash(ISqliteStatement statement, int column) => TCodec.Read(statement, column);

    public void BeforeCommit()
    {
    }

    public void AfterCommit()
    {
    }

    public void AfterRollback()
    {
    }

    /// <summary>Duplicati's insert after a miss: when another writer stored the block since the lookup, the unique index refuses the insert and the block is found instead.</summary>
    private SelectXorInsertResult InsertUnlessRaced(string hash, long size)
    {
        long id;
        try
        {
            id = InsertRow(hash, size);
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Constraint)
        {
            if (Find(hash, size) is not { } existing)
            {
                throw;
            }

            _batch.EndWrite(wrote: false);
            return new SelectXorInsertResult(existing, false);
        }

        _batch.EndWrite(wrote: true);
        return new SelectXorInsertResult(id, true);
    }

    private SelectXorInsertResult InsertOrIgnoreThenSelect(string hash, long size)
    {
        var insert = _strategyInsert!;
        TCodec.Bind(insert, 1, hash);
        insert.BindInt64(2, size);
        var created = insert.ExecuteNonQuery() > 0;
        var id = Find(hash, size) ?? throw new BlockDbException($"Block ({hash}, {size} bytes) is missing right after INSERT OR IGNORE.");
        _batch.EndWrite(created);
        return new SelectXorInsertResult(id, created);
    }

    private SelectXorInsertResult InsertReturningThenSelect(string hash, long size)
    {
        var insert = _strategyInsert!;
        TCodec.Bind(insert, 1, hash);
        insert.BindInt64(2, size);
        long? created;
        try
        {
            created = insert.Step() ? insert.ColumnInt64(0) : null;
        }
        finally
        {
            insert.Reset();
        }

        if (created is { } newId)
        {
            _batch.EndWrite(wrote: true);
            return new SelectXorInsertResult(newId, true);
        }

        var id = Find(hash, size) ?? throw new BlockDbException($"Block ({hash}, {size} bytes) conflicted on insert but is not found.");
        _batch.EndWrite(wrote: false);
        return new SelectXorInsertResult(id, false);
    }

    private long InsertRow(string hash, long size)
    {
        TCodec.Bind(_insert, 1, hash);
        _insert.BindInt64(2, size);
        try
        {
            _insert.Step();
            return _insert.ColumnInt64(0);
        }
        finally
        {
            _insert.Reset();
        }
    }
}
