using BlockDb.PostgreSql.Schema;
using BlockDb.Volumes;
using Npgsql;
using NpgsqlTypes;

namespace BlockDb.PostgreSql.Sessions;

/// <summary>
/// The lifecycle's operations on one connection, inside the caller's transaction or (when it passes none) in one implicit
/// transaction per batch of statements: volumes, blockset deletion, garbage collection. Refusals (unknown volume, a
/// change of state that is not allowed) are found by reading, never by a server error, so an open batch stays usable.
/// The lifecycle lock is taken as <see cref="PgLifecycleSql"/> says.
/// </summary>
internal static class PgLifecycleOps
{
    /// <summary>A batch that takes the lifecycle lock (<paramref name="lockSql"/>) before <paramref name="commands"/>, in one implicit transaction when there is no open one.</summary>
    public static NpgsqlBatch Locked(NpgsqlConnection connection, NpgsqlTransaction? transaction, string lockSql, params NpgsqlBatchCommand[] commands)
    {
        var batch = new NpgsqlBatch(connection, transaction);
        batch.BatchCommands.Add(new NpgsqlBatchCommand(lockSql));
        foreach (var command in commands)
        {
            batch.BatchCommands.Add(command);
        }

        return batch;
    }

    /// <summary>Runs a <see cref="Locked"/> batch and returns its reader on the first result after the lock's.</summary>
    public static async Task<NpgsqlDataReader> ReadAfterLockAsync(NpgsqlBatch batch, CancellationToken cancellationToken)
    {
        var reader = await batch.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
        return reader;
    }

    /// <summary>
    /// Inserts a block recorded in a volume under the shared lock, then (when <paramref name="thenFind"/>) finds it: the
    /// new ID or the found one, whether this call created it, and the volume's state (null: no such volume).
    /// </summary>
    public static async Task<(long? Id, bool Created, VolumeState? Volume)> InsertInVolumeAsync(
        NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[] hash, long size, long volumeId, bool thenFind, CancellationToken cancellationToken)
    {
        var insert = PgBlockOps.BatchCommand(PgLifecycleSql.InsertBlockInVolume, hash, size);
        insert.Parameters.Add(Id(volumeId));
        using var batch = thenFind
            ? Locked(connection, transaction, PgLifecycleSql.LockShared, insert, PgBlockOps.BatchCommand(PgSql.FindBlock, hash, size))
            : Locked(connection, transaction, PgLifecycleSql.LockShared, insert);
        var reader = await ReadAfterLockAsync(batch, cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        long? created = reader.IsDBNull(0) ? null : reader.GetInt64(0);
        VolumeState? state = reader.IsDBNull(1) ? null : VolumeRules.Parse(reader.GetString(1), volumeId);
        if (created is not null || !thenFind)
        {
            return (created, created is not null, state);
        }

        await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
        return (await reader.ReadAsync(cancellationToken).ConfigureAwait(false) ? reader.GetInt64(0) : null, false, state);
    }

    /// <summary>The error for a volume that cannot receive blocks, or null when <paramref name="state"/> can.</summary>
    public static BlockDbException? Unrecordable(long volumeId, VolumeState? state) => state switch
    {
        null => new VolumeNotFoundException(volumeId),
        { } going when VolumeRules.IsGoing(going) => new BlockDbConflictException($"Volume {volumeId} is {going}; blocks can be recorded into, or moved to, a volume only before it is being deleted. Register a new volume for them."),
        _ => null,
    };

    public static async Task<BlockInfo> GetBlockAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long blockId, CancellationToken cancellationToken)
    {
        using var command = Command(PgLifecycleSql.GetBlock, connection, transaction, Id(blockId));
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        return await reader.ReadAsync(cancellationToken).ConfigureAwait(false)
            ? new BlockInfo(blockId, Convert.ToBase64String(reader.GetFieldValue<byte[]>(0)), reader.GetInt64(1), reader.IsDBNull(2) ? null : reader.GetInt64(2))
            : throw new BlockNotFoundException(blockId);
    }

    public static async Task<long?> FindBlocksetAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[] fullHash, long length, CancellationToken cancellationToken)
    {
        using var command = Command(PgLifecycleSql.FindBlockset, connection, transaction, new NpgsqlParameter<byte[]> { NpgsqlDbType = NpgsqlDbType.Bytea, TypedValue = fullHash }, Id(length));
        return await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is long id ? id : null;
    }

    /// <summary>Deletes a blockset and its entries; false when there is none.</summary>
    public static async Task<bool> DeleteBlocksetAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long blocksetId, CancellationToken cancellationToken)
    {
        using var command = Command(PgLifecycleSql.DeleteBlockset, connection, transaction, Id(blocksetId));
        return await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is long;
    }

    /// <summary>Registers a volume; null when the name is taken.</summary>
    public static async Task<long?> RegisterVolumeAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, string name, VolumeState state, CancellationToken cancellationToken)
    {
        using var command = Command(PgLifecycleSql.RegisterVolume, connection, transaction, Text(name), Text(state.ToString()));
        return await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is long id ? id : null;
    }

    /// <summary>A volume by ID (null when none), or by name.</summary>
    public static async Task<VolumeInfo?> GetVolumeAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long? volumeId, string? name, CancellationToken cancellationToken)
    {
        using var command = volumeId is { } id
            ? Command(PgLifecycleSql.GetVolume, connection, transaction, Id(id))
            : Command(PgLifecycleSql.FindVolume, connection, transaction, Text(name!));
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        return await reader.ReadAsync(cancellationToken).ConfigureAwait(false) ? ReadVolume(reader) : null;
    }

    /// <summary>Reads a row of <see cref="PgLifecycleSql.GetVolume"/> or <see cref="PgLifecycleSql.EnumerateVolumes"/>.</summary>
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

    /// <summary>Deletes the unreferenced blocks under the exclusive lock: all, or one volume's (unknown volume: <see cref="VolumeNotFoundException"/>).</summary>
    public static Task<CollectResult> CollectAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long? volumeId, CancellationToken cancellationToken) =>
        InTransactionAsync(connection, transaction, async (tx, ct) =>
        {
            await ExclusiveAsync(connection, tx, volumeId, forUpdate: false, ct).ConfigureAwait(false);
            using var collect = Command(PgLifecycleSql.Collect, connection, tx, new NpgsqlParameter { NpgsqlDbType = NpgsqlDbType.Bigint, Value = (object?)volumeId ?? DBNull.Value });
            var reader = await collect.ExecuteReaderAsync(ct).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            var byVolume = new List<VolumeCollected>();
            while (await reader.ReadAsync(ct).ConfigureAwait(false))
            {
                byVolume.Add(new VolumeCollected(reader.IsDBNull(0) ? null : reader.GetInt64(0), reader.GetInt64(1), reader.GetInt64(2)));
            }

            return new CollectResult(byVolume.Sum(v => v.Blocks), byVolume.Sum(v => v.Bytes), byVolume);
        }, cancellationToken);

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
                using var contents = Command(PgLifecycleSql.VolumeContents, connection, tx, Id(volumeId));
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

            using var update = Command(PgLifecycleSql.SetVolumeState, connection, tx, Text(state.ToString()), new NpgsqlParameter { NpgsqlDbType = NpgsqlDbType.Bigint, Value = (object?)size ?? DBNull.Value }, Id(volumeId));
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

            using var move = Command(PgLifecycleSql.MoveBlocks, connection, tx, new NpgsqlParameter<long[]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bigint, TypedValue = ids }, Id(toVolumeId));
            var reader = await move.ExecuteReaderAsync(ct).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            await reader.ReadAsync(ct).ConfigureAwait(false);
            return (reader.GetInt64(0), reader.IsDBNull(1) ? (int?)null : checked((int)reader.GetInt64(1) - 1));
        }, cancellationToken);

    /// <summary>Takes the exclusive lifecycle lock and reads a volume's state (locking its row when <paramref name="forUpdate"/>); no volume asked: <see cref="VolumeState.Temporary"/>.</summary>
    /// <exception cref="VolumeNotFoundException">A volume was named and there is none.</exception>
    private static async Task<VolumeState> ExclusiveAsync(NpgsqlConnection connection, NpgsqlTransaction transaction, long? volumeId, bool forUpdate, CancellationToken cancellationToken)
    {
        using (var exclusive = new NpgsqlCommand(PgLifecycleSql.LockExclusive, connection, transaction))
        {
            await exclusive.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }

        if (volumeId is not { } id)
        {
            return VolumeState.Temporary;
        }

        using var read = Command(forUpdate ? PgLifecycleSql.VolumeStateForUpdate : PgLifecycleSql.VolumeState, connection, transaction, Id(id));
        return await read.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is string text
            ? VolumeRules.Parse(text, id)
            : throw new VolumeNotFoundException(id);
    }

    /// <summary>Runs <paramref name="body"/> in the caller's transaction, or in one of its own committed at the end (rolled back on any failure).</summary>
    private static async Task<T> InTransactionAsync<T>(NpgsqlConnection connection, NpgsqlTransaction? transaction, Func<NpgsqlTransaction, CancellationToken, Task<T>> body, CancellationToken cancellationToken)
    {
        if (transaction is not null)
        {
            return await body(transaction, cancellationToken).ConfigureAwait(false);
        }

        var own = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
        await using var ownScope = own.ConfigureAwait(false);
        var result = await body(own, cancellationToken).ConfigureAwait(false);
        await own.CommitAsync(CancellationToken.None).ConfigureAwait(false);
        return result;
    }

    private static NpgsqlCommand Command(string sql, NpgsqlConnection connection, NpgsqlTransaction? transaction, params NpgsqlParameter[] parameters)
    {
        var command = new NpgsqlCommand(sql, connection, transaction);
        command.Parameters.AddRange(parameters);
        return command;
    }

    private static NpgsqlParameter<long> Id(long value) => new() { NpgsqlDbType = NpgsqlDbType.Bigint, TypedValue = value };

    private static NpgsqlParameter<string> Text(string value) => new() { NpgsqlDbType = NpgsqlDbType.Text, TypedValue = value };
}
