using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Blocksets;

/// <summary>
/// One table's ID floor (<see cref="BlockDbSql.IdFloorSql"/>) on a connection: the highest ID before a deletion, and the
/// raise after it, in the deletion's transaction [ID1][ID2]. Shared by garbage collection (blocks), blockset deletion and the
/// layout conversion. Used only inside the session's gate.
/// </summary>
internal sealed class IdFloor(ISqliteConnection connection, BlockDbSql.IdFloorSql floor)
{
    private readonly ISqliteStatement _raise = connection.Prepare(floor.Raise);
    private ISqliteStatement? _highest;

    /// <summary>The table's highest ID, 0 when it has no row.</summary>
    public long Highest()
    {
        var highest = _highest ??= connection.Prepare(floor.Highest);
        try
        {
            highest.Step();
            return highest.ColumnInt64(0);
        }
        finally
        {
            highest.Reset();
        }
    }

    /// <summary>
    /// After a deletion, inside its transaction: records <paramref name="before"/> (the highest ID before the deletion,
    /// or the deleted ID) as the floor when no ID left is as high; never lowers the floor, writes nothing otherwise.
    /// </summary>
    public void Raise(long before) => Raise(_raise, before);

    /// <summary><see cref="Raise(long)"/> once on <paramref name="connection"/>, for a repair or a conversion (no session).</summary>
    public static void RaiseOnce(ISqliteConnection connection, BlockDbSql.IdFloorSql floor, long before)
    {
        using var raise = connection.Prepare(floor.Raise);
        Raise(raise, before);
    }

    private static void Raise(ISqliteStatement raise, long before)
    {
        raise.BindInt64(1, before);
        raise.ExecuteNonQuery();
    }
}
