using BlockDb.Blocksets;
using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.Collection;

/// <summary>
/// A session's garbage collection: the blocks no blockset references, counted per volume and deleted in the same write
/// transaction (inside a savepoint), so what is counted is what is deleted and no blockset can name a block between the
/// two. When the collection deletes the block with the highest ID, it records that ID as the collected high-water mark
/// (<see cref="BlockDbSql.BlockIdFloor"/>) in the same transaction, so no layout hands a collected ID to another
/// block: a select-xor-insert result another session still holds is then refused, never silently re-pointed. The
/// statements are the layout's (<see cref="SessionSql"/>): on a Duplicati database a block a blocklist hash names is
/// referenced, collected blocks go to <c>DeletedBlock</c> first and their <c>DuplicateBlock</c> rows go [DQ3], and there
/// is no floor (BlockDb keeps nothing in the file). Used only inside the session's gate.
/// </summary>
internal sealed class CollectionService(ISqliteConnection connection, SqliteTransaction batch, VolumeGuard volumes, SessionSql sql)
{
    private readonly ISqliteStatement _countAll = connection.Prepare(sql.UnreferencedByVolume);
    private readonly ISqliteStatement _countVolume = connection.Prepare(sql.UnreferencedInVolume);
    private readonly ISqliteStatement _deleteAll = connection.Prepare(sql.DeleteUnreferenced);
    private readonly ISqliteStatement _deleteVolume = connection.Prepare(sql.DeleteUnreferencedInVolume);
    private readonly ISqliteStatement[] _beforeAll = [.. sql.BeforeDeleteUnreferenced.Select(connection.Prepare)];
    private readonly ISqliteStatement[] _beforeVolume = [.. sql.BeforeDeleteUnreferencedInVolume.Select(connection.Prepare)];
    private readonly IdFloor? _floor = sql.BlockIdFloor is { } floor ? new(connection, floor) : null;

    /// <summary>Deletes the unreferenced blocks, all or those of one volume, and says what went.</summary>
    /// <exception cref="VolumeNotFoundException">A volume was named and no volume has that ID.</exception>
    public CollectResult Collect(long? volumeId) => batch.Write((this, volumeId), static s =>
    {
        var (self, volumeId) = s;
        if (volumeId is { } volume)
        {
            _ = self.Volumes.Read(volume);
        }

        var result = self.Batch.AllOrNothing((self, volumeId), static c => c.self.CountAndDelete(c.volumeId));
        if (result.Blocks > 0)
        {
            self.Batch.Wrote();
        }
        return result;
    });

    private SqliteTransaction Batch => batch;

    private VolumeGuard Volumes => volumes;

    private CollectResult CountAndDelete(long? volumeId)
    {
        var (count, before, delete) = volumeId is null ? (_countAll, _beforeAll, _deleteAll) : (_countVolume, _beforeVolume, _deleteVolume);
        if (volumeId is { } volume)
        {
            count.BindInt64(1, volume);
            delete.BindInt64(1, volume);
            foreach (var statement in before)
            {
                statement.BindInt64(1, volume);
            }
        }

        var byVolume = new List<VolumeCollected>();
        try
        {
            while (count.Step())
            {
                byVolume.Add(new VolumeCollected(count.ColumnIsNull(0) ? null : count.ColumnInt64(0), count.ColumnInt64(1), count.ColumnInt64(2)));
            }
        }
        finally
        {
            count.Reset();
        }

        var result = new CollectResult(byVolume.Sum(v => v.Blocks), byVolume.Sum(v => v.Bytes), byVolume);
        if (result.Blocks == 0)
        {
            return result;
        }

        var highest = _floor?.Highest() ?? 0;
        foreach (var statement in before)
        {
            statement.ExecuteNonQuery();
        }

        var deleted = delete.ExecuteNonQuery();
        if (deleted != result.Blocks)
        {
            throw new BlockDbException($"Garbage collection counted {result.Blocks} unreferenced blocks but deleted {deleted} in the same transaction (a trigger outside BlockDb?); nothing of this call was written. Run CheckAsync.");
        }

        _floor?.Raise(highest);
        batch.Revise();
        return result;
    }
}
