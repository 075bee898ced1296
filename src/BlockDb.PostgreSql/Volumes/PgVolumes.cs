using BlockDb.PostgreSql.Collection;
using BlockDb.PostgreSql.Schema;
using BlockDb.Volumes;
using Npgsql;
using NpgsqlTypes;
using static BlockDb.PostgreSql.Collection.PgLifecycleLock;
using static BlockDb.PostgreSql.PgCommands;

namespace BlockDb.PostgreSql.Volumes;

/// <summary>
/// The volume operations on one connection, inside the caller's transaction or (when it passes none) in one implicit
/// transaction per batch of statements. Refusals (unknown volume, a change of state that is not allowed) are found by
/// reading, never by a server error, so an open batch stays usable. State changes and moves take the exclusive
/// lifecycle lock (<see cref="PgLifecycleLock"/>).
/// </summary>
internal static class PgVolumes
{
    /// <summary>The error for a volume that cannot receive blocks, or null when <paramref name="state"/> can.</summary>
    public static BlockDbException? Unrecordable(long volumeId, VolumeState? state) => state switch
    {
        null => new VolumeNotFoundException(volumeId),
        { } going when VolumeRules.IsGoing(going) => new BlockDbConflictException($"Volume {volumeId} is {going}; blocks can be recorded into, or moved to, a volume only before it is being deleted. Register a new volume for them."),
        _ => null,
    };

    /// <summary>Registers a volume; null when the name is taken.</summary>
    public static async Task<long?> RegisterVolumeAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, string name, VolumeState state, CancellationToken cancellationToken)
    {
        using var command = Command(PgSql.RegisterVolume, connection, transaction, Text(name), Text(state.ToString()));
        return await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is long id ? id : null;
    }

    /// <summary>A volume by ID (null when none), or by name.</summary>
    public static async Task<VolumeInfo?> GetVolumeAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long? volumeId, string? name, CancellationToken cancellationToken)
    {
        using var command = volumeId is { } id
            ? Command(PgSql.GetVolume, connection, transaction, Id(id))
            : Command(PgSql.FindVolume, connection, transaction, Text(name!));
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        return await reader.ReadAsync(cancellationToken).ConfigureAwait(false) ? ReadVolume(reader) : null;
    }

    /// <summary>Reads a row of <see cref="PgSql.GetVolume"/> or <see cref="PgSql.EnumerateVolumes"/>.</summary>
    public static VolumeInfo ReadVolume(NpgsqlDataReader reader)
    {
        var id = reader.GetInt64(0);
        return new VolumeInfo(
            id,
            reader.GetString(1),
            VolumeRules.Parse(reader.GetString(2), id),
            reader.IsDBNull(3) ? null : reader.GetInt64(3),
            reader.GetInt64(4),
            reader.GetInt64(5),
            reader.GetInt64(6),
            reader.GetInt64(7));
    }

    /// <summary>Changes a volume's state under the exclusive lock, refusing what <see cref="VolumeRules"/> and the volume's blocks do not allow.</summary>
    public static Task<bool> SetVolumeStateAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long volumeId, VolumeState state, long? size, CancellationToken cancellationToken) =>
        InTransactionAsync(connection, transaction, async (tx, ct) =>
        {
            var from = await ExclusiveAsync(connection, tx, volumeId, forUpdate: true, ct).ConfigureAwait(false);
            if (!VolumeRules.CanChange(from, state))
            {
                throw new BlockDbConflictException(VolumeRules.Refused(volumeId, from, state));
            }

            if (state != from && state is VolumeState.Deleting or VolumeState.Deleted)
            {
                using var contents = Command(PgSql.VolumeContents, connection, tx, Id(volumeId));
                var reader = await contents.ExecuteReaderAsync(ct).ConfigureAwait(false);
                await using var readerScope = reader.ConfigureAwait(false);
                await reader.ReadAsync(ct).ConfigureAwait(false);
                if (state == VolumeState.Deleting && reader.GetBoolean(0))
                {
                    throw new BlockDbConflictException($"Volume {volumeId} still holds blocks that blocksets reference; it can be deleted only once they are moved to other volumes (MoveBlocksAsync) or their blocksets deleted.");
                }

                if (state == VolumeState.Deleted && reader.GetBoolean(1))
                {
                    throw new BlockDbConflictException($"Volume {volumeId} still holds blocks; collect them (DeleteUnreferencedBlocksAsync with its ID) before it is Deleted.");
                }
            }

            using var update = Command(PgSql.SetVolumeState, connection, tx, Text(state.ToString()), new NpgsqlParameter { NpgsqlDbType = NpgsqlDbType.Bigint, Value = (object?)size ?? DBNull.Value }, Id(volumeId));
            await update.ExecuteNonQueryAsync(ct).ConfigureAwait(false);
            return true;
        }, cancellationToken);

    /// <summary>Moves blocks to a volume under the exclusive lock: how many were listed, or the 0-based position of the first unknown block (nothing moved then).</summary>
    public static Task<(long Moved, int? Missing)> MoveBlocksAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long[] ids, long toVolumeId, CancellationToken cancellationToken) =>
        InTransactionAsync(connection, transaction, async (tx, ct) =>
        {
            var state = await ExclusiveAsync(connection, tx, toVolumeId, forUpdate: false, ct).ConfigureAwait(false);
            if (Unrecordable(toVolumeId, state) is { } refused)
            {
                throw refused;
            }

            using var move = Command(PgSql.MoveBlocks, connection, tx, new NpgsqlParameter<long[]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bigint, TypedValue = ids }, Id(toVolumeId));
            var reader = await move.ExecuteReaderAsync(ct).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            await reader.ReadAsync(ct).ConfigureAwait(false);
            return (reader.GetInt64(0), reader.IsDBNull(1) ? (int?)null : checked((int)reader.GetInt64(1) - 1));
        }, cancellationToken);
}
