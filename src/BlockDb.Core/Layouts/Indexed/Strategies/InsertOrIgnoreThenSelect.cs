using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Volumes;

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

    // Under the write lock a lookup first costs a found block one read instead of an insert that does nothing and a read.
    public SelectXorInsertResult SelectXorInsertInWrite<TCodec>(in IndexedSession<TCodec, InsertOrIgnoreThenSelect> session, in BlockKey block, long? volumeId, out BlockVolume volume)
        where TCodec : struct, IHashCodec => session.FindThenInsertInWrite(block, volumeId, out volume);
}
