using BlockDb.Drivers;

namespace BlockDb.Layouts.Indexed;

/// <summary>
/// <see cref="SelectXorInsertStrategy.SelectThenInsert"/>, Duplicati's way: a lookup outside any transaction; after a
/// miss, an insert in the batch. When another writer stored the block between the two, the unique index refuses the
/// insert and the block is found instead (no write counted).
/// </summary>
internal readonly struct SelectThenInsert : ISelectXorInsertStrategy<SelectThenInsert>
{
    public static SelectThenInsert Prepare(ISqliteConnection connection) => default;

    public SelectXorInsertResult SelectXorInsert<TCodec>(IndexedBlockStore<TCodec, SelectThenInsert> store, in HashInput hash, long size, long? volumeId)
        where TCodec : struct, IHashCodec
    {
        store.Batch.EnterRead();
        return store.Find(hash, size) is { } id
            ? new SelectXorInsertResult(id, false)
            : store.Batch.Write((store, hash, size, volumeId), static s => InsertUnlessRaced(s.store, s.hash, s.size, s.volumeId));
    }

    private static SelectXorInsertResult InsertUnlessRaced<TCodec>(IndexedBlockStore<TCodec, SelectThenInsert> store, in HashInput hash, long size, long? volumeId)
        where TCodec : struct, IHashCodec
    {
        long id;
        try
        {
            id = store.InsertRow(hash, size, volumeId);
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Constraint)
        {
            if (store.Find(hash, size) is not { } existing)
            {
                throw;
            }

            return new SelectXorInsertResult(existing, false);
        }

        store.Batch.Wrote();
        return new SelectXorInsertResult(id, true);
    }
}
