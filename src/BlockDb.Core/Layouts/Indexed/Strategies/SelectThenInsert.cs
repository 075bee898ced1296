using BlockDb.Drivers;

namespace BlockDb.Layouts.Indexed;

/// <summary>
/// <see cref="SelectXorInsertStrategy.SelectThenInsert"/>, Duplicati's way: a lookup outside any transaction; after a
/// miss, an insert in the write transaction. When another writer stored the block between the two, the unique index
/// refuses the insert and the block is found instead (no write counted).
/// </summary>
internal readonly struct SelectThenInsert : ISelectXorInsertStrategy<SelectThenInsert>
{
    public static SelectThenInsert Prepare(ISqliteConnection connection) => default;

    public SelectXorInsertResult SelectXorInsert<TCodec>(in IndexedSession<TCodec, SelectThenInsert> session, in BlockKey block, long? volumeId)
        where TCodec : struct, IHashCodec
    {
        session.Transaction.EnterRead();
        if (session.Find(block) is { } found)
        {
            return new SelectXorInsertResult(found, false);
        }

        // One INSERT: on a caller's connection no step savepoint around it [X1].
        session.Transaction.BeginForOneWrite();
        long id;
        try
        {
            id = session.InsertRow(block, volumeId);
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Constraint)
        {
            if (session.Find(block) is not { } existing)
            {
                throw;
            }

            return new SelectXorInsertResult(existing, false);
        }

        session.Transaction.Wrote();
        return new SelectXorInsertResult(id, true);
    }
}
