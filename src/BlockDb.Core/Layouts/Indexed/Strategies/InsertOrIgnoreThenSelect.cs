using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Layouts.Indexed;

/// <summary>
/// <see cref="SelectXorInsertStrategy.InsertOrIgnoreThenSelect"/>: <c>INSERT OR IGNORE</c> in the batch,
/// <c>changes()</c> tells whether it inserted, then a lookup returns the ID either way.
/// </summary>
internal readonly struct InsertOrIgnoreThenSelect(ISqliteStatement insertOrIgnore) : ISelectXorInsertStrategy<InsertOrIgnoreThenSelect>
{
    public static InsertOrIgnoreThenSelect Prepare(ISqliteConnection connection) => new(connection.Prepare(BlockDbSql.InsertBlockOrIgnore));

    public SelectXorInsertResult SelectXorInsert<TCodec>(in IndexedSession<TCodec, InsertOrIgnoreThenSelect> session, in BlockKey block, long? volumeId)
        where TCodec : struct, IHashCodec => session.InsertThenFind(insertOrIgnore, returnsId: false, block, volumeId);
}
