namespace BlockDb.Drivers.Native;

// A listing's row in one call (IBlockRowStatement): the step and four column reads with the state checked once.
internal sealed unsafe partial class NativeStatement : IBlockRowStatement
{
    public bool StepBlockRow(out long first, out long second, Span<byte> hash, out int hashLength, out long size)
    {
        (first, second, hashLength, size) = (0, 0, 0, 0);
        if (!Step())
        {
            return false;
        }

        var stmt = CheckReadable(3, nameof(StepBlockRow));
        first = SqliteNative.sqlite3_column_int64(stmt, 0);
        second = SqliteNative.sqlite3_column_int64(stmt, 1);
        hashLength = ReadBlob(stmt, 2, hash);
        size = SqliteNative.sqlite3_column_int64(stmt, 3);
        GC.KeepAlive(this);
        return true;
    }
}
