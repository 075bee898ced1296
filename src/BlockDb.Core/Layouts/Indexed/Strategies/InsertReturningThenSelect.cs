using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Layouts.Indexed;

/// <summary>
/// <see cref="SelectXorInsertStrategy.InsertReturningThenSelect"/>: <c>INSERT … ON CONFLICT DO NOTHING RETURNING "ID"</c>
/// in the batch; a row back is the new block, no row means it exists and a lookup returns its ID.
/// </summary>
internal readonly struct InsertReturningThenSelect(ISqliteStatement insertReturning) : ISelectXorInsertStrategy<InsertReturningThenSelect>
{
    public static InsertReturningThenSelect Prepare(ISqliteConnection connection) => new(connection.Prepare(BlockDbSql.InsertBlockReturningUnlessExists));

    public SelectXorInsertResult SelectXorInsert<TCodec>(in IndexedSession<TCodec, InsertReturningThenSelect> session, in BlockKey block, long? volumeId)
        where TCodec : struct, IHashCodec => session.InsertThenFind(insertReturning, returnsId: true, block, volumeId);
}
