namespace BlockDb.Drivers;

/// <summary>
/// A prepared query whose rows are blocks in four columns (two integers, a BLOB hash, an integer size) that a driver can
/// step and read in one call: a blockset listing pays one interface call and one set of state checks per row instead
/// of six (<see cref="ISqliteStatement.Step"/> and four column reads). Same meaning as those calls; a driver that does
/// not implement it is called column by column.
/// </summary>
internal interface IBlockRowStatement
{
    /// <summary>
    /// Steps to the next row (<see cref="ISqliteStatement.Step"/>); on a row reads columns 0 and 1 as integers, copies
    /// column 2's bytes into <paramref name="hash"/> (at most its length; <paramref name="hashLength"/> is the value's
    /// whole length, -1 for NULL, as <see cref="ISqliteStatement.ColumnBlob"/>) and reads column 3 as an integer.
    /// </summary>
    /// <returns><see langword="true"/> for a row, <see langword="false"/> when the query is done (the outputs then 0).</returns>
    /// <exception cref="BlockDbException">SQLite failed (its result code); the statement is reset.</exception>
    /// <exception cref="ObjectDisposedException">The statement or its connection is disposed.</exception>
    bool StepBlockRow(out long first, out long second, Span<byte> hash, out int hashLength, out long size);
}
