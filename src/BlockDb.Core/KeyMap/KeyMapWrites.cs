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
/// <c>COMMIT</c> [F2], merges the inserts into the shared map after it and drops them otherwise [M3]. A bulk import's
/// session lifts the insert guard for its write transaction and restores and checks it before <c>COMMIT</c> [M6].
/// </summary>
internal sealed class KeyMapWrites : IBatchParticipant
{
    private readonly ISqliteStatement _raiseMaxBlockId;
    private readonly ISqliteStatement _insert;
    private readonly IBlockInsertStatement? _insertBlock;
    private readonly ISqliteStatement _verify;
    private readonly ISqliteStatement _verifyWithVolume;
    private readonly IBlockVerifyStatement? _verifyFused;
    private readonly IBlockVerifyStatement? _verifyWithVolumeFused;
    private readonly BlockKeyMap _map;
    private readonly ISqliteConnection _connection;
    private readonly bool _bulk;
    private MapVersion _version;
    private MapVersion? _restoredAt;
    private long _maxInserted;
    private ISqliteStatement? _getManyByIdWithVolume;
    private bool _lifted;

    /// <summary>Prepares the session's statements on <paramref name="connection"/> and joins <paramref name="transaction"/> as its participant.</summary>
    /// <param name="connection">The session's connection.</param>
    /// <param name="map">The database's shared key map.</param>
    /// <param name="transaction">The session's transaction.</param>
    /// <param name="volumes">The session's volume checks.</param>
    /// <param name="bulk">A bulk import's session: each write transaction lifts the insert guard after its catch-up [M6].</param>
    public KeyMapWrites(ISqliteConnection connection, BlockKeyMap map, SqliteTransaction transaction, VolumeGuard volumes, bool bulk = false)
    {
        _map = map;
        _connection = connection;
        _bulk = bulk;
        Transaction = transaction;
        Volumes = volumes;
        _verify = connection.Prepare(BlockDbSql.VerifyBlockId);
        _verifyWithVolume = connection.Prepare(BlockDbSql.VerifyBlockIdWithVolume);
        (_verifyFused, _verifyWithVolumeFused) = (_verify as IBlockVerifyStatement, _verifyWithVolume as IBlockVerifyStatement);
        Queries = new KeyMapQueries(connection);
        _insert = connection.Prepare(BlockDbSql.InsertBlockWithId);
        _insertBlock = _insert as IBlockInsertStatement;
        _raiseMaxBlockId = connection.Prepare(BlockDbSql.RaiseMaxBlockId);
        transaction.Attach(this);
    }

    public SqliteTransaction Transaction { get; }

    /// <summary>A bulk import's session: its inserts go into the shared map as they are written [M6].</summary>
    public bool Bulk => _bulk;

    public VolumeGuard Volumes { get; }

    /// <summary>
    /// Whether the row at <paramref name="id"/> holds <paramref name="block"/> [M1] (<see cref="BlockDbSql.VerifyBlockId"/>:
    /// SQLite compares; nothing is read back but, when <paramref name="readVolume"/>, the row's <c>VolumeID</c>).
    /// </summary>
    public bool Verify(long id, in BlockKey block, bool readVolume, out long? volumeId)
    {
        if ((readVolume ? _verifyWithVolumeFused : _verifyFused) is { } fused)
        {
            return fused.VerifyBlock(id, block.HashBytes, block.Size, readVolume, out volumeId);
        }

        volumeId = null;
        var verify = readVolume ? _verifyWithVolume : _verify;
        verify.BindInt64(1, id);
        verify.BindBlob(2, block.HashBytes);
        verify.BindInt64(3, block.Size);
        try
        {
            if (!verify.Step())
            {
                return false;
            }

            volumeId = readVolume && !verify.ColumnIsNull(0) ? verify.ColumnInt64(0) : null;
            return true;
        }
        finally
        {
            verify.Reset();
        }
    }

    /// <summary><see cref="BlockDbSql.GetBlocksByIdWithVolume"/>, prepared on first use (a one-call file's map hits).</summary>
    public ISqliteStatement GetManyByIdWithVolume => _getManyByIdWithVolume ??= _connection.Prepare(BlockDbSql.GetBlocksByIdWithVolume);

    public KeyMapQueries Queries { get; }

    /// <summary>This transaction's inserts, until they commit [M3]; a bulk import's are in the shared map instead [M6].</summary>
    public KeyTable Inserts { get; } = new();

    /// <summary>Whether this write transaction has caught up: from then on a miss is authoritative [M4].</summary>
    public bool CaughtUp { get; private set; }

    /// <summary>The next ID this transaction inserts at (0 before its catch-up): above every ID in the file [F2].</summary>
    public long NextId { get; private set; }

    /// <summary>Records this write transaction's catch-up, before any insert of it [M4]; a bulk import's lifts the insert guard [M6].</summary>
    public void CaughtUpAt(CatchUpResult result)
    {
        (CaughtUp, NextId, _version) = (true, result.NextId, result.Version);
        if (_bulk)
        {
            _lifted = true;
            _connection.Execute(BlockDbSql.LiftGuardInsert);
        }
    }

    /// <summary>
    /// Inserts a block at <paramref name="id"/> (<see cref="NextId"/>) and records it: its entry joins this transaction's
    /// own table, or for a bulk import the shared map before the row goes in [M3, M6] (one probe finds it). Room for the
    /// entry is made before the row is written, so a map at its memory limit writes nothing.
    /// </summary>
    /// <exception cref="BlockDbConfigurationException">The map would pass its memory limit; nothing was written.</exception>
    public void Insert(in BlockKey block, uint key, long id, long? volumeId)
    {
        var slot = KeyTable.SlotOf(key, id);
        if (Bulk)
        {
            _map.AddUncommitted(slot);
        }
        else
        {
            _map.Reserve(Inserts.Count + 1);
            Inserts.EnsureRoomFor(1);
        }

        var hash = block.HashBytes;
        if (_insertBlock is { } insert)
        {
            insert.InsertBlock(id, hash, block.Size, volumeId);
        }
        else
        {
            _insert.BindInt64(1, id);
            _insert.BindBlob(2, hash);
            _insert.BindInt64(3, block.Size);
            if (volumeId is { } volume)
            {
                _insert.BindInt64(4, volume);
            }
            else
            {
                _insert.BindNull(4);
            }

            _insert.ExecuteNonQuery();
        }

        if (!Bulk)
        {
            Inserts.Add(slot);
        }

        (_maxInserted, NextId) = (id, id + 1);
    }

    public void BeforeCommit()
    {
        if (_maxInserted > 0)
        {
            _raiseMaxBlockId.BindInt64(1, _maxInserted);
            _raiseMaxBlockId.ExecuteNonQuery();
        }

        if (_lifted)
        {
            _restoredAt = RestoreGuard();
        }
    }

    public void AfterCommit()
    {
        if (Inserts.Count > 0 || _restoredAt is not null)
        {
            _map.Merge(Inserts, _maxInserted, _version, _restoredAt ?? _version);
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

    /// <summary>
    /// Re-creates the insert guard with its exact text (a savepoint rolled back may have restored it already), checks
    /// that the file's triggers are exactly the guards (or fails the commit: the transaction rolls back, guard and rows
    /// together), and returns the version the file will have at <c>COMMIT</c>: the caught-up version moved only by this
    /// transaction's own guard DDL [M6].
    /// </summary>
    private MapVersion RestoreGuard()
    {
        _connection.Execute(BlockDbSql.LiftGuardInsert);
        _connection.Execute(BlockDbSql.RestoreGuardInsert);
        using (var triggers = _connection.Prepare(BlockDbSql.KeyMapTriggerRows))
        {
            if (KeyMapTriggers.Read(triggers) is { Intact: false } changed)
            {
                throw new BlockDbFormatException($"The KeyMap guards of {Quoted.Path(_connection.FileName)} are not intact after the import restored its insert guard; the import transaction was rolled back. {changed.Problem(null)}");
            }
        }

        using var state = _connection.Prepare(BlockDbSql.ReadKeyMapState);
        return state.Step()
            ? new MapVersion(state.ColumnInt64(1), state.ColumnInt64(2))
            : throw new BlockDbFormatException("The KeyMap state row (BlockDbState) is gone; the import transaction was rolled back.");
    }

    private void EndTransaction()
    {
        Inserts.Clear();
        (CaughtUp, NextId, _maxInserted, _lifted, _restoredAt) = (false, 0, 0, false, null);
    }
}
