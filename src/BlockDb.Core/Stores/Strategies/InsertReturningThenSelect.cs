using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Stores;

/// <summary>
/// <see cref="SelectXorInsertStrategy.InsertReturningThenSelect"/>: <c>INSERT … ON CONFLICT DO NOTHING RETURNING "ID"</c>
/// in the batch; a row back is the new block, no row means it exists and a lookup returns its ID.
/// </summary>
internal readonly struct InsertReturningThenSelect(ISqliteStatement insertReturning) : ISelectXorInsertStrategy<InsertReturningThenSelect>
{
    public static InsertReturningThenSelect Prepare(ISqliteConnection connection) => new(connection.Prepare(BlockDbSql.InsertBlockReturningUnlessExists));

    public SelectXorInsertResult SelectXorInsert<TCodec>(IndexedBlockStore<TCodec, InsertReturningThenSelect> store, string hash, long size)
        where TCodec : struct, IHashCodec =>
        store.Batch.Write((store, insertReturning, hash, size), static s =>
        {
            s.store.BindBlock(s.insertReturning, s.hash, s.size);
            long? created;
            try
            {
                created = s.insertReturning.Step() ? s.insertReturning.ColumnInt64(0) : null;
            }
            finally
            {
                s.insertReturning.Reset();
            }

            var result = created is { } newId ? new SelectXorInsertResult(newId, true) : new SelectXorInsertResult(s.store.FindAfterConflict(s.hash, s.size), false);
            s.store.Batch.EndWrite(result.Created);
            return result;
        });
}
