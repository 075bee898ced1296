namespace BlockDb.Drivers.Native;

// The hot calls fused (IBlockInsertStatement, IBlockVerifyStatement, IBlockRowStatement): the same native calls as the
// ISqliteStatement calls they stand for, with one interface call and the state checked once.
internal sealed unsafe partial class NativeStatement : IBlockInsertStatement, IBlockVerifyStatement, IBlockRowStatement
{
    /// <summary>
    /// Binds a <c>Block</c> row and runs the insert in one call (<see cref="IBlockInsertStatement"/>): the state checked
    /// once, then the four binds, the step and the reset, the same native calls as
    /// <see cref="BindInt64"/>, <see cref="BindBlob(int, ReadOnlySpan{byte})"/>, <see cref="BindNull"/> and <see cref="ExecuteNonQuery"/>.
    /// </summary>
    public void InsertBlock(long id, ReadOnlySpan<byte> hash, long size, long? volumeId)
    {
        var stmt = CheckBindable(4, nameof(InsertBlock));
        var rc = SqliteNative.sqlite3_bind_int64(stmt, 1, id);
        if (rc == SqliteCodes.Ok)
        {
            BindBytes(stmt, 2, hash, text: false, nameof(InsertBlock));
            rc = SqliteNative.sqlite3_bind_int64(stmt, 3, size);
        }

        if (rc == SqliteCodes.Ok)
        {
            rc = volumeId is { } volume ? SqliteNative.sqlite3_bind_int64(stmt, 4, volume) : SqliteNative.sqlite3_bind_null(stmt, 4);
        }

        if (rc != SqliteCodes.Ok)
        {
            throw Failure(rc, nameof(InsertBlock));
        }

        Execute(stmt, nameof(InsertBlock), countChanges: false);
    }

    /// <summary>
    /// A key map's verification read in one call (<see cref="IBlockVerifyStatement"/>): the three binds, one step, the
    /// volume column when asked and the reset, the same native calls as <see cref="BindInt64"/>,
    /// <see cref="BindBlob(int, ReadOnlySpan{byte})"/>, <see cref="Step"/>, <see cref="ColumnInt64"/> and <see cref="Reset"/>.
    /// </summary>
    public bool VerifyBlock(long id, ReadOnlySpan<byte> hash, long size, bool readVolume, out long? volumeId)
    {
        volumeId = null;
        var stmt = CheckBindable(3, nameof(VerifyBlock));
        var rc = SqliteNative.sqlite3_bind_int64(stmt, 1, id);
        if (rc == SqliteCodes.Ok)
        {
            BindBytes(stmt, 2, hash, text: false, nameof(VerifyBlock));
            rc = SqliteNative.sqlite3_bind_int64(stmt, 3, size);
        }

        if (rc != SqliteCodes.Ok)
        {
            throw Failure(rc, nameof(VerifyBlock));
        }

        try
        {
            if (!Step())
            {
                return false;
            }

            if (readVolume)
            {
                stmt = CheckReadable(0, nameof(VerifyBlock));
                volumeId = SqliteNative.sqlite3_column_type(stmt, 0) == SqliteCodes.NullType ? null : SqliteNative.sqlite3_column_int64(stmt, 0);
            }

            return true;
        }
        finally
        {
            Reset();
        }
    }

    /// <summary>A listing's row in one call (<see cref="IBlockRowStatement"/>): the step and four column reads.</summary>
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

    /// <summary>
    /// Copies column <paramref name="column"/>'s bytes into <paramref name="destination"/> (at most its length) and
    /// returns the value's length, -1 for NULL. Two native calls, not three: the type is asked only when there are no
    /// bytes (NULL, or an empty value; a NULL stays NULL through sqlite3_column_blob).
    /// </summary>
    private int ReadBlob(nint stmt, int column, Span<byte> destination)
    {
        var bytes = SqliteNative.sqlite3_column_blob(stmt, column);
        var length = SqliteNative.sqlite3_column_bytes(stmt, column);
        if (bytes == null)
        {
            if (length > 0)
            {
                // Not NULL and not empty, so SQLite failed to convert the value (out of memory).
                throw SqliteErrors.FromConnection(_db, SqliteCodes.NoMem, $"Reading column {column} of statement '{Statement.Name}'");
            }

            if (SqliteNative.sqlite3_column_type(stmt, column) == SqliteCodes.NullType)
            {
                return -1;
            }
        }

        new ReadOnlySpan<byte>(bytes, Math.Min(length, destination.Length)).CopyTo(destination);
        return length;
    }
}
