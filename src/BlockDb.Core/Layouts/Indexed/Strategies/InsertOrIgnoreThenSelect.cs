using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Layouts.Indexed;

/// <summary>
/// <see cref="SelectXorInsertStrategy.InsertOrIgnoreThenSelect"/>: <c>INSERT OR IGNORE</c> in the batch; when
/// <c>changes()</c> says it inserted, the new ID is <c>last_insert_rowid()</c> (one statement for a new block), else a
/// lookup finds the existing one. (A blockset's blocks are looked up first and then inserted under the write lock, whatever the strategy.)
/// </summary>
internal readonly struct InsertOrIgnoreThenSelect(ISqliteStatement insertOrIgnore) : ISelectXorInsertStrategy<InsertOrIgnoreThenSelect>
{
    public static InsertOrIgnoreThenSelect Prepare(ISqliteConnection connection) => new(connection.Prepare(BlockDbSql.InsertBlockOrIgnore));

    public SelectXorInsertResult SelectXorInsert<TCodec>(in IndexedSession<TCodec, InsertOrIgnoreThenSelect> session, in BlockKey block, long? volumeId)
        where TCodec : struct, IHashCodec => session.InsertThenFind(insertOrIgnore, returnsId: false, block, volumeId);
}
