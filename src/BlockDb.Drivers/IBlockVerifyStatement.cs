namespace BlockDb.Drivers;

/// <summary>
/// A prepared query of a <c>Block</c> row by ID, hash and size (?1 the ID, ?2 the hash as a BLOB, ?3 the size; its one
/// column the row's <c>VolumeID</c>) that a driver can bind, step, read and reset in one call: a key map's verification
/// read pays one interface call and one set of state checks instead of six (three binds, the step, a column read and
/// the reset). Same meaning as those calls; a driver that does not implement it is called bind by bind.
/// </summary>
internal interface IBlockVerifyStatement
{
    /// <summary>
    /// Binds ?1 = <paramref name="id"/>, ?2 = <paramref name="hash"/> (a BLOB, copied), ?3 = <paramref name="size"/>,
    /// steps once and resets the statement.
    /// </summary>
    /// <param name="id">The candidate's ID.</param>
    /// <param name="hash">The block's hash bytes.</param>
    /// <param name="size">The block's size in bytes.</param>
    /// <param name="readVolume">Whether to read the row's column 0 into <paramref name="volumeId"/>.</param>
    /// <param name="volumeId">The row's column 0 (null for NULL) when <paramref name="readVolume"/> and a row came; else null.</param>
    /// <returns><see langword="true"/> when the query gave a row.</returns>
    /// <exception cref="BlockDbException">SQLite failed (its result code); the statement is reset.</exception>
    /// <exception cref="ObjectDisposedException">The statement or its connection is disposed.</exception>
    bool VerifyBlock(long id, ReadOnlySpan<byte> hash, long size, bool readVolume, out long? volumeId);
}
