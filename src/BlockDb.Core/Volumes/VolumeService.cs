using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Sqlite;

namespace BlockDb.Volumes;

/// <summary>
/// A session's volume calls: register, change state, read, find by name, and move blocks between volumes, with the
/// layout's statements (<see cref="SessionSql"/>: on a Duplicati database, Duplicati's columns and only its Blocks
/// volumes). Used only inside the session's gate.
/// </summary>
internal sealed class VolumeService
{
    private const int CancellationCheckInterval = 256;

    private readonly SqliteTransaction _batch;
    private readonly VolumeGuard _guard;
    private readonly ISqliteStatement _insert;
    private readonly ISqliteStatement _byName;
    private readonly ISqliteStatement _nameTaken;
    private readonly string? _insertRefused;
    private readonly ISqliteStatement[] _afterDeleted;
    private readonly ISqliteStatement[] _afterMove;
    private readonly ISqliteStatement _setState;
    private readonly ISqliteStatement _hasReferenced;
    private readonly ISqliteStatement _hasBlocks;
    private readonly ISqliteStatement _get;
    private readonly ISqliteStatement _move;

    public VolumeService(ISqliteConnection connection, SqliteTransaction batch, VolumeGuard guard, SessionSql sql)
    {
        _batch = batch;
        _guard = guard;
        _insert = connection.Prepare(sql.InsertVolume);
        _insertRefused = sql.InsertVolumeRefused;
        _byName = connection.Prepare(sql.FindVolumeId);
        _nameTaken = sql.VolumeNameTaken == sql.FindVolumeId ? _byName : connection.Prepare(sql.VolumeNameTaken);
        _setState = connection.Prepare(sql.SetVolumeState);
        _hasReferenced = connection.Prepare(sql.VolumeHasReferencedBlocks);
        _hasBlocks = connection.Prepare(BlockDbSql.VolumeHasBlocks);
        _get = connection.Prepare(sql.GetVolume);
        _move = connection.Prepare(BlockDbSql.MoveBlock);
        _afterDeleted = [.. sql.AfterVolumeDeleted.Select(connection.Prepare)];
        _afterMove = [.. sql.AfterMove.Select(connection.Prepare)];
    }

    /// <summary>Registers a volume (the name checked by the caller).</summary>
    public long Register(string name, VolumeState state) => _batch.Write((this, name, state), static s =>
    {
        var (self, name, state) = s;
        if (IdOf(self._nameTaken, name) is { } existing)
        {
            throw new BlockDbConflictException($"A volume named {Quoted.Value(name)} exists already (ID {existing}); volume names are unique.");
        }

        self._insert.BindText(1, name);
        self._insert.BindText(2, state.ToString());
        long id;
        try
        {
            id = self._insert.Step()
                ? self._insert.ColumnInt64(0)
                : throw new BlockDbConflictException($"Volume {Quoted.Value(name)} was not registered: {self._insertRefused}. Nothing was written.");
        }
        finally
        {
            self._insert.Reset();
        }

        self._batch.Wrote();
        return id;
    });

    /// <summary>Moves a volume to another state (and records its size), when the change is allowed.</summary>
    public void SetState(long volumeId, VolumeState state, long? size) => _batch.Write((this, volumeId, state, size), static s =>
    {
        var (self, id, state, size) = s;
        var from = self._guard.Read(id);
        if (!VolumeRules.CanChange(from, state))
        {
            throw new BlockDbConflictException(VolumeRules.Refused(id, from, state));
        }

        if (state == VolumeState.Deleting && from != VolumeState.Deleting && Exists(self._hasReferenced, id))
        {
            throw new BlockDbConflictException($"Volume {id} still holds blocks that blocksets reference; it can be deleted only once they are moved to other volumes (MoveBlocksAsync) or their blocksets deleted.");
        }

        if (state == VolumeState.Deleted && from != VolumeState.Deleted && Exists(self._hasBlocks, id))
        {
            throw new BlockDbConflictException($"Volume {id} still holds blocks; collect them (DeleteUnreferencedBlocksAsync with its ID) before it is Deleted.");
        }

        if (state == VolumeState.Deleted && from != VolumeState.Deleted && self._afterDeleted.Length > 0)
        {
            // The state change and the layout's rows dropped with it (Duplicati's DeletedBlock/DuplicateBlock) go
            // together: a failure between them would leave a half-deleted volume in the batch.
            self._batch.AllOrNothing((self, id, state, size), static d =>
            {
                var (self, id, state, size) = d;
                self.Update(id, state, size);
                foreach (var after in self._afterDeleted)
                {
                    after.BindInt64(1, id);
                    after.ExecuteNonQuery();
                }

                return true;
            });
        }
        else
        {
            self.Update(id, state, size);
        }

        self._batch.Revise();
        self._batch.Wrote();
        return true;
    });

    private void Update(long id, VolumeState state, long? size)
    {
        _setState.BindText(1, state.ToString());
        if (size is { } bytes)
        {
            _setState.BindInt64(2, bytes);
        }
        else
        {
            _setState.BindNull(2);
        }

        _setState.BindInt64(3, id);
        _setState.ExecuteNonQuery();
    }

    /// <summary>Moves blocks to a volume: all of them, or none.</summary>
    public long Move(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken) =>
        _batch.Write((this, blockIds, toVolumeId, cancellationToken), static s =>
        {
            var (self, ids, to, cancellationToken) = s;
            self._guard.RequireRecordable(to);
            var moved = self._batch.AllOrNothing((self, ids, to, cancellationToken), static m =>
            {
                var (self, ids, to, cancellationToken) = m;
                self._move.BindInt64(1, to);
                for (var i = 0; i < ids.Count; i++)
                {
                    if (i % CancellationCheckInterval == 0)
                    {
                        cancellationToken.ThrowIfCancellationRequested();
                    }

                    self._move.BindInt64(2, ids[i]);
                    if (self._move.ExecuteNonQuery() == 0)
                    {
                        throw new BlockNotFoundException($"Block {i} of the list (ID {ids[i]}) is not in the index; nothing was moved.", i);
                    }

                    foreach (var after in self._afterMove)
                    {
                        after.BindInt64(1, to);
                        after.BindInt64(2, ids[i]);
                        after.ExecuteNonQuery();
                    }
                }

                return (long)ids.Count;
            });
            if (moved > 0)
            {
                self._batch.Wrote();
            }
            return moved;
        });

    /// <summary>A volume with what it holds.</summary>
    /// <exception cref="VolumeNotFoundException">No volume has that ID.</exception>
    public VolumeInfo Get(long volumeId)
    {
        _get.BindInt64(1, volumeId);
        try
        {
            return _get.Step() ? ReadVolume(_get) : throw new VolumeNotFoundException(volumeId);
        }
        finally
        {
            _get.Reset();
        }
    }

    /// <summary>A volume by name, or null.</summary>
    public VolumeInfo? Find(string name) => IdOf(_byName, name) is { } id ? Get(id) : null;

    /// <summary>Reads the current row of <see cref="BlockDbSql.GetVolume"/> or <see cref="BlockDbSql.EnumerateVolumes"/>.</summary>
    public static VolumeInfo ReadVolume(ISqliteStatement row)
    {
        var id = row.ColumnInt64(0);
        return new VolumeInfo(
            id,
            row.ColumnText(1) ?? string.Empty,
            VolumeRules.Parse(row.ColumnText(2), id),
            row.ColumnIsNull(3) ? null : row.ColumnInt64(3),
            row.ColumnInt64(4),
            row.ColumnInt64(5),
            row.ColumnInt64(6),
            row.ColumnInt64(7));
    }

    private static bool Exists(ISqliteStatement query, long id)
    {
        query.BindInt64(1, id);
        try
        {
            return query.Step() && query.ColumnInt64(0) != 0;
        }
        finally
        {
            query.Reset();
        }
    }

    private static long? IdOf(ISqliteStatement byName, string name)
    {
        byName.BindText(1, name);
        try
        {
            return byName.Step() ? byName.ColumnInt64(0) : null;
        }
        finally
        {
            byName.Reset();
        }
    }
}
