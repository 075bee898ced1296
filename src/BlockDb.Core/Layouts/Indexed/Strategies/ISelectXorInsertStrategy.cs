using BlockDb.Drivers;

namespace BlockDb.Layouts.Indexed;

/// <summary>
/// One <see cref="SelectXorInsertStrategy"/> of the indexed layouts, as a struct: it prepares only the statement it
/// needs, and <see cref="IndexedSession{TCodec, TStrategy}"/> calls it without a virtual call.
/// </summary>
/// <typeparam name="TSelf">The strategy itself.</typeparam>
internal interface ISelectXorInsertStrategy<TSelf>
    where TSelf : struct, ISelectXorInsertStrategy<TSelf>
{
    /// <summary>Prepares the strategy's own statements on a session's connection.</summary>
    static abstract TSelf Prepare(ISqliteConnection connection);

    /// <summary>Finds the block, inserting it when absent (recorded in <paramref name="volumeId"/>), in the session's write transaction.</summary>
    SelectXorInsertResult SelectXorInsert<TCodec>(in IndexedSession<TCodec, TSelf> session, in BlockKey block, long? volumeId)
        where TCodec : struct, IHashCodec;
}
