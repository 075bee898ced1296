using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Sqlite;

namespace BlockDb.Layouts.Indexed;

/// <summary>
/// An indexed session's view of the collected blocks' high-water mark [ID1]. SQLite gives a new row the highest ID + 1,
/// which would hand a collected block's ID to the next block; so the first insert of each transaction (and after a
/// collection or a rolled-back savepoint in it) reads the mark, and while it is above every ID an insert takes it + 1.
/// Read under the write lock: no other writer can insert or collect until the transaction ends.
/// </summary>
internal sealed class CollectedFloor(ISqliteConnection connection, SqliteTransaction transaction)
{
    private readonly ISqliteStatement _floor = connection.Prepare(BlockDbSql.BlockIdFloor.AboveMax);
    private (long Transaction, long Revision) _readAt = (-1, -1);
    private long? _aboveMax;

    /// <summary>The mark while it is above every block ID, else null (read once per transaction and revision).</summary>
    public long? AboveMax()
    {
        var at = (transaction.Transaction, transaction.Revision);
        if (_readAt == at)
        {
            return _aboveMax;
        }

        try
        {
            _aboveMax = _floor.Step() ? _floor.ColumnInt64(0) : null;
        }
        finally
        {
            _floor.Reset();
        }

        _readAt = at;
        return _aboveMax;
    }

    /// <summary>After an insert that created a block: its ID is above the mark, so SQLite's own choice is safe until the next collection.</summary>
    public void Created() => _aboveMax = null;
}
