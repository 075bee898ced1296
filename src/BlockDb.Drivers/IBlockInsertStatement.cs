namespace BlockDb.Drivers;

/// <summary>
/// A prepared statement whose four parameters are a <c>Block</c> row's (ID, hash, size, volume) that a driver can bind
/// and run in one call: a bulk import's insert pays one interface call and one set of state checks per row instead of
/// five (four binds and <see cref="ISqliteStatement.ExecuteNonQuery"/>). Same meaning as those five calls, bindings kept
/// across the reset as <see cref="ISqliteStatement"/> keeps them; a driver that does not implement it is called bind by bind.
/// </summary>
internal interface IBlockInsertStatement
{
    /// <summary>Binds ?1 = <paramref name="id"/>, ?2 = <paramref name="hash"/> (a BLOB, copied), ?3 = <paramref name="size"/>, ?4 = <paramref name="volumeId"/> (NULL when null), runs the statement to completion and resets it (an insert without a trigger that ignores it writes its one row or fails, so the count of changed rows is not read).</summary>
    /// <exception cref="BlockDbException">SQLite failed (its result code); the statement is reset.</exception>
    /// <exception cref="ObjectDisposedException">The statement or its connection is disposed.</exception>
    void InsertBlock(long id, ReadOnlySpan<byte> hash, long size, long? volumeId);
}
