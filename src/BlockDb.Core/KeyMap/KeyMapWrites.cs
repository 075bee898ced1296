using BlockDb.Drivers;
using BlockDb.Sessions;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.KeyMap;

/// <summary>
/// A <see cref="KeyMapSession"/>'s mutable part: its prepared statements and its write transaction's own state, the
/// inserts not yet committed (their own <see cref="KeyTable"/> [M3]), whether the transaction has caught up [M4] and the
/// next ID it inserts at [F2]. Told of every end of the transaction as its participant: raises <c>MaxBlockId</c> before
/// <c>COMMIT</c> [F2], merges the inserts into the shared map after it and drops them otherwise [M3].
/// </summary>
internal sealed class KeyMapWrites : IBatchParticipant
{
    private readonly ISqliteStatement _raiseMaxBlockId;
    private readonly BlockKeyMap _map;
    private MapVersion _version;
    private long _maxInserted;

    public KeyMapWrites(ISqliteConnection connection, BlockKeyMap map, SqliteTransaction transaction, VolumeGuard volumes)
    {
        _map = map;
        Transaction = transaction;
        Volumes = volumes;
        GetById = connection.Prepare(BlockDbSql.GetBlockById);
        GetByIdWithVolume = connection.Prepare(BlockDbSql.GetBlockByIdWithVolume);
        Queries = new KeyMapQueries(connection);
        Insert = connection.Prepare(BlockDbSql.InsertBlockWithId);
        _raiseMaxBlockId = connection.Prepare(BlockDbSql.RaiseMaxBlockId);
        transaction.Attach(this);
    }

    public SqliteTransaction Transaction { get; }

    public VolumeGuard Volumes { get; }

    /// <summary><see cref="BlockDbSql.GetBlockById"/>: a candidate's hash and size.</summary>
    public ISqliteStatement GetById { get; }

    /// <summary><see cref="BlockDbSql.GetBlockByIdWithVolume"/>: the same and the row's <c>VolumeID</c> (column 2).</summary>
    public ISqliteStatement GetByIdWithVolume { get; }

    public KeyMapQueries Queries { get; }

    public ISqliteStatement Insert { get; }

    /// <summary>This transaction's inserts, until they commit [M3].</summary>
    public KeyTable Inserts { get; } = new();

    /// <summary>Whether this write transaction has caught up: from then on a miss is authoritative [M4].</summary>
    public bool CaughtUp { get; private set; }

    /// <summary>The next ID this transaction inserts at (0 before its catch-up): above every ID in the file [F2].</summary>
    public long NextId { get; private set; }

    /// <summary>Records this write transaction's catch-up, before any insert of it [M4].</summary>
    public void CaughtUpAt(CatchUpResult result) => (CaughtUp, NextId, _version) = (true, result.NextId, result.Version);

    /// <summary>Records an insert at <see cref="NextId"/>.</summary>
    public void Inserted(uint key, long id)
    {
        Inserts.Add(KeyTable.SlotOf(key, id));
        (_maxInserted, NextId) = (id, id + 1);
    }

    public void BeforeCommit()
    {
        if (_maxInserted > 0)
        {
            _raiseMaxBlockId.BindInt64(1, _maxInserted);
            _raiseMaxBlockId.ExecuteNonQuery();
        }
    }

    public void AfterCommit()
    {
        if (Inserts.Count > 0)
        {
            _map.Merge(Inserts, _maxInserted, _version);
        }

        EndTransaction();
    }

    public void AfterRollback() => EndTransaction();

    /// <summary>The next ID this transaction would insert (0 before its catch-up, when it has inserted nothing): every own insert from then on has an ID at or above it.</summary>
    public long SavepointMark => NextId;

    /// <summary>
    /// Drops the own inserts a rolled-back savepoint took back (their IDs are at or above <paramref name="mark"/>), so only
    /// rows still in the transaction join the shared map at its commit [M3]. The IDs are not handed out again: the next
    /// insert continues above them, and <c>MaxBlockId</c> is raised past them as it would be past any ID BlockDb used.
    /// </summary>
    public void AfterRollbackTo(long mark) => Inserts.RemoveIdsFrom(mark);

    private void EndTransaction()
    {
        Inserts.Clear();
        (CaughtUp, NextId, _maxInserted) = (false, 0, 0);
    }
}
