using System.Globalization;
using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Layouts.Indexed;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.KeyMap;

/// <summary>
/// The <see cref="BlockLayout.KeyMap"/> layout for one session: lookups through the database's shared
/// <see cref="BlockKeyMap"/>, inserts at IDs this session chooses under the write lock, and the session's own
/// uncommitted inserts in a table of its own until they commit.
/// </summary>
/// <remarks>
/// Why an insert after a miss cannot make a duplicate: the miss is decided while the session holds the write lock,
/// after a catch-up in that same transaction (the first lookup of each write transaction catches up; no other
/// writer can commit until this one ends), so the shared map plus this session's own inserts hold every block of
/// the file. A new block gets the ID max(<c>MaxBlockId</c>, highest row ID) + 1, above every ID in the file, and the
/// transaction raises <c>MaxBlockId</c> to its highest ID before <c>COMMIT</c>, so no BlockDb insert ever bumps the
/// file's generation. The own table is merged into the shared map only after <c>COMMIT</c> and dropped on a
/// rollback or a lost batch, so the shared map never holds an entry that was rolled back.
/// </remarks>
internal sealed class KeyMapBlockStore : IBlockStore
{
    private readonly BlockKeyMap _map;
    private readonly SqliteTransaction _batch;
    private readonly VolumeGuard _volumes;
    private readonly ISqliteStatement _getById;
    private readonly ISqliteStatement _getByIdWithVolume;
    private readonly KeyMapQueries _catchUp;
    private readonly ISqliteStatement _insert;
    private readonly ISqliteStatement _raiseMaxBlockId;
    private readonly KeyTable _inserts = new();
    private readonly KeyHasher _hasher;
    private bool _caughtUp;
    private long _nextId;
    private MapVersion _version;
    private long _maxInserted;

    public KeyMapBlockStore(ISqliteConnection connection, BlockKeyMap map, SqliteTransaction batch, VolumeGuard volumes)
    {
        _map = map;
        _hasher = map.Hasher;
        _batch = batch;
        _volumes = volumes;
        _getById = connection.Prepare(BlockDbSql.GetBlockById);
        _getByIdWithVolume = connection.Prepare(BlockDbSql.GetBlockByIdWithVolume);
        _catchUp = new KeyMapQueries(connection);
        _insert = connection.Prepare(BlockDbSql.InsertBlockWithId);
        _raiseMaxBlockId = connection.Prepare(BlockDbSql.RaiseMaxBlockId);
        batch.Attach(this);
    }

    public long? Find(in HashInput hash, long size)
    {
        var bytes = hash.AsBytes();
        return Find(bytes.Bytes, size, _hasher.KeyOf(bytes.Bytes, size), catchUp: true);
    }

    public SelectXorInsertResult SelectXorInsert(in HashInput hash, long size, long? volumeId)
    {
        var write = new Write(this, hash.AsBytes(), size, volumeId);
        if (!_batch.IsOpen)
        {
            // Outside a write transaction: a verified hit needs no lock. The first load runs here, not under the write lock.
            _batch.Reads.Enter();
            EnsureLoaded();
            if (Find(write.Hash.Bytes, size, write.Key, catchUp: false) is { } known)
            {
                return new SelectXorInsertResult(known, false);
            }
        }

        return _batch.Write(write, static w =>
        {
            if (w.Store.Find(w.Hash.Bytes, w.Size, w.Key, catchUp: true) is { } id)
            {
                return new SelectXorInsertResult(id, false);
            }

            var created = w.Store.InsertNew(w.Hash.Bytes, w.Size, w.Key, w.VolumeId);
            w.Store._batch.Wrote();
            return new SelectXorInsertResult(created, true);
        });
    }

    public SelectXorInsertResult SelectXorInsertInWrite(in HashInput hash, long size, long? volumeId, out BlockVolume volume)
    {
        _batch.RequireOpen();
        var bytes = hash.AsBytes();
        var key = _hasher.KeyOf(bytes.Bytes, size);
        if (Find(bytes.Bytes, size, key, catchUp: true, _getByIdWithVolume, readVolume: true, out var found) is { } id)
        {
            // The verification read ran in this write transaction: its VolumeID is the row's now.
            volume = BlockVolume.Read(found);
            return new SelectXorInsertResult(id, false);
        }

        var created = InsertNew(bytes.Bytes, size, key, volumeId);
        _batch.Wrote();
        volume = BlockVolume.Checked;
        return new SelectXorInsertResult(created, true);
    }

    public long Insert(in HashInput hash, long size, long? volumeId)
    {
        EnsureLoaded();
        return _batch.Write(new Write(this, hash.AsBytes(), size, volumeId), static w =>
        {
            if (w.Store.Find(w.Hash.Bytes, w.Size, w.Key, catchUp: true) is { } id)
            {
                throw new BlockDbException(
                    string.Create(CultureInfo.InvariantCulture, $"Block ({Convert.ToBase64String(w.Hash.Bytes)}, {w.Size} bytes) is already in the index as ID {id}; use SelectXorInsertAsync to get the ID of a block that may exist. (SQLITE_CONSTRAINT_UNIQUE, as the unique index of the other layouts reports.)"),
                    SqliteResultCode.Constraint,
                    SqliteResultCode.ConstraintUnique);
            }

            var created = w.Store.InsertNew(w.Hash.Bytes, w.Size, w.Key, w.VolumeId);
            w.Store._batch.Wrote();
            return created;
        });
    }

    public string ReadHash(ISqliteStatement statement, int column) => BlobHashCodec.Read(statement, column);

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
        if (_inserts.Count > 0)
        {
            _map.Merge(_inserts, _maxInserted, _version);
        }

        EndTransaction();
    }

    public void AfterRollback() => EndTransaction();

    /// <summary>The next ID this transaction would insert (0 before its catch-up, when it has inserted nothing): every own insert from then on has an ID at or above it.</summary>
    public long SavepointMark => _nextId;

    /// <summary>
    /// Drops the own inserts a rolled-back savepoint took back (their IDs are at or above <paramref name="mark"/>), so only
    /// rows still in the transaction join the shared map at its commit (M3). The IDs are not handed out again: the next
    /// insert continues above them, and <c>MaxBlockId</c> is raised past them as it would be past any ID BlockDb used.
    /// </summary>
    public void AfterRollbackTo(long mark) => _inserts.RemoveIdsFrom(mark);

    /// <summary>
    /// The lookup. Inside this session's write transaction the answer is complete once the transaction has caught up:
    /// a miss then means the block is not in the file.
    /// </summary>
    private long? Find(ReadOnlySpan<byte> hash, long size, uint key, bool catchUp) =>
        Find(hash, size, key, catchUp, _getById, readVolume: false, out _);

    /// <summary>The lookup, verifying with <paramref name="getById"/>; when <paramref name="readVolume"/>, also the found row's <c>VolumeID</c> (its column 2).</summary>
    private long? Find(ReadOnlySpan<byte> hash, long size, uint key, bool catchUp, ISqliteStatement getById, bool readVolume, out long? volumeId)
    {
        if (_map.FindVerified(hash, size, key, getById, readVolume, out volumeId) is { } id)
        {
            return id;
        }

        var inWrite = _batch.IsOpen;
        if (inWrite)
        {
            if (KeyTable.FindVerified(_inserts.Slots, key, hash, size, getById, readVolume, out volumeId) is { } own)
            {
                return own;
            }

            if (_caughtUp)
            {
                return null;
            }
        }

        if (!catchUp)
        {
            return null;
        }

        var result = _map.CatchUp(_catchUp, _batch.CallCancellation);
        if (inWrite)
        {
            // The first catch-up of this transaction, before any insert of it: the map now holds every committed row.
            (_caughtUp, _nextId, _version) = (true, result.NextId, result.Version);
        }

        return _map.FindVerified(hash, size, key, getById, readVolume, out volumeId);
    }

    /// <summary>Appends a block the caught-up lookup did not find, at the next ID.</summary>
    private long InsertNew(ReadOnlySpan<byte> hash, long size, uint key, long? volumeId)
    {
        if (!_caughtUp)
        {
            throw new InvalidOperationException("KeyMap insert without a catch-up in this transaction.");
        }

        var id = _nextId;
        if (id > KeyMapLayout.MaxId)
        {
            throw new BlockDbException(
                string.Create(CultureInfo.InvariantCulture, $"The KeyMap layout holds block IDs 1 to {KeyMapLayout.MaxId} and this file has used them all (IDs are never reused); convert it to the BlobHash layout. Nothing was written."),
                SqliteResultCode.Full,
                SqliteResultCode.Full);
        }

        _volumes.RequireRecordable(volumeId);
        _map.Reserve(_inserts.Count + 1);
        _inserts.EnsureRoomFor(1);
        _insert.BindInt64(1, id);
        _insert.BindBlob(2, hash);
        _insert.BindInt64(3, size);
        if (volumeId is { } volume)
        {
            _insert.BindInt64(4, volume);
        }
        else
        {
            _insert.BindNull(4);
        }

        _insert.ExecuteNonQuery();
        _inserts.Add(KeyTable.SlotOf(key, id));
        (_maxInserted, _nextId) = (id, id + 1);
        return id;
    }

    private void EnsureLoaded()
    {
        if (!_map.Loaded)
        {
            _map.CatchUp(_catchUp, _batch.CallCancellation);
        }
    }

    private void EndTransaction()
    {
        _inserts.Clear();
        (_caughtUp, _nextId, _maxInserted) = (false, 0, 0);
    }

    /// <summary>One write's state, carried by value through <see cref="SqliteTransaction.Write{TState, TResult}"/>.</summary>
    private readonly struct Write(KeyMapBlockStore store, BlockHash hash, long size, long? volumeId)
    {
        public readonly KeyMapBlockStore Store = store;
        public readonly BlockHash Hash = hash;
        public readonly long Size = size;
        public readonly long? VolumeId = volumeId;
        public readonly uint Key = store._hasher.KeyOf(hash.Bytes, size);
    }
}
