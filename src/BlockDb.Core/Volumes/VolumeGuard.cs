using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Sqlite;

namespace BlockDb.Volumes;

/// <summary>
/// Checks, inside a session's write transaction, that a volume may receive blocks: it exists and is not
/// <see cref="VolumeState.Deleting"/> or <see cref="VolumeState.Deleted"/>. A volume found fit stays fit until the
/// transaction ends or this session changes a volume's state (no other writer can change it while this one holds the
/// write lock; <see cref="VolumeService.SetState"/> moves <see cref="SqliteTransaction.Revision"/>), so the check reads the
/// volume once per (transaction, revision). Its statement (the layout's <see cref="SessionSql.GetVolumeState"/>: a volume
/// that cannot hold blocks reads as none) is prepared on first use. Used only inside the session's gate.
/// </summary>
internal sealed class VolumeGuard(ISqliteConnection connection, SqliteTransaction batch, SqlStatement getState)
{
    private ISqliteStatement? _state;
    private long _checkedVolume;
    private (long Transaction, long Revision) _checkedIn = (-1, -1);

    /// <summary>Refuses a volume that cannot receive blocks; <see langword="null"/> (no volume) is always allowed. Call inside the write transaction.</summary>
    /// <exception cref="VolumeNotFoundException">No volume has that ID.</exception>
    /// <exception cref="BlockDbConflictException">The volume is being deleted or is deleted.</exception>
    public void RequireRecordable(long? volumeId)
    {
        if (volumeId is not { } id || IsRecordable(id))
        {
            return;
        }

        Accept(id, Read(id));
    }

    /// <summary>Whether the volume was found fit in this transaction and revision (<see cref="RequireRecordable(long?)"/> would read nothing).</summary>
    public bool IsRecordable(long volumeId) => volumeId == _checkedVolume && _checkedIn == (batch.Transaction, batch.Revision);

    /// <summary>
    /// <see cref="RequireRecordable(long?)"/> from the volume's state as the caller's own statement read it in this
    /// transaction (column <paramref name="column"/> of <paramref name="row"/>: the layout's <see cref="SessionSql.GetVolumeState"/>'s value, NULL for no volume).
    /// </summary>
    /// <exception cref="VolumeNotFoundException">No volume has that ID.</exception>
    /// <exception cref="BlockDbConflictException">The volume is being deleted or is deleted.</exception>
    public void RequireRecordable(long volumeId, ISqliteStatement row, int column) =>
        Accept(volumeId, row.ColumnIsNull(column) ? throw new VolumeNotFoundException(volumeId) : VolumeRules.Parse(row.ColumnText(column), volumeId));

    private void Accept(long id, VolumeState state)
    {
        if (VolumeRules.IsGoing(state))
        {
            throw new BlockDbConflictException($"Volume {id} is {state}; blocks can be recorded into, or moved to, a volume only before it is being deleted. Register a new volume for them.");
        }

        (_checkedVolume, _checkedIn) = (id, (batch.Transaction, batch.Revision));
    }

    /// <summary>
    /// Whether blocks of this volume must not be newly referenced by a blockset: its state is
    /// <see cref="VolumeState.Deleting"/> or <see cref="VolumeState.Deleted"/>. A volume ID with no row is not going
    /// (as <see cref="BlockDbSql.GetBlockSizeAndVolumeState"/>'s outer join reads it).
    /// </summary>
    public bool IsGoing(long volumeId)
    {
        var state = _state ??= connection.Prepare(getState);
        state.BindInt64(1, volumeId);
        try
        {
            return state.Step() && IsGoingState(state, 0);
        }
        finally
        {
            state.Reset();
        }
    }

    /// <summary>Whether column <paramref name="column"/> of the current row, a volume's state (or NULL), is <see cref="VolumeState.Deleting"/> or <see cref="VolumeState.Deleted"/>.</summary>
    public static bool IsGoingState(ISqliteStatement row, int column) =>
        !row.ColumnIsNull(column) && row.ColumnText(column) is nameof(VolumeState.Deleting) or nameof(VolumeState.Deleted);

    /// <summary>A volume's state.</summary>
    /// <exception cref="VolumeNotFoundException">No volume has that ID.</exception>
    public VolumeState Read(long volumeId)
    {
        var state = _state ??= connection.Prepare(getState);
        state.BindInt64(1, volumeId);
        try
        {
            return state.Step()
                ? VolumeRules.Parse(state.ColumnText(0), volumeId)
                : throw new VolumeNotFoundException(volumeId);
        }
        finally
        {
            state.Reset();
        }
    }
}
