using BlockDb.PostgreSql.Schema;
using BlockDb.Volumes;
using Npgsql;
using static BlockDb.PostgreSql.PgCommands;

namespace BlockDb.PostgreSql.Collection;

/// <summary>
/// The lifecycle lock (<see cref="PgSql.LockShared"/>, <see cref="PgSql.LockExclusive"/>): writes that make blocks
/// referenced or record them into a volume take it shared; garbage collection, volume state changes and block moves
/// take it exclusive, each before the statement it protects.
/// </summary>
internal static class PgLifecycleLock
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

    /// <summary>Runs a <see cref="Locked"/> batch and returns its reader on the first result after the lock's (disposed when a statement fails, so the connection can run the next command).</summary>
    public static async Task<NpgsqlDataReader> ReadAfterLockAsync(NpgsqlBatch batch, CancellationToken cancellationToken)
    {
        var reader = await batch.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
            return reader;
        }
        catch
        {
            await reader.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Takes the exclusive lifecycle lock and reads a volume's state (locking its row when <paramref name="forUpdate"/>); no volume asked: <see cref="VolumeState.Temporary"/>.</summary>
    /// <exception cref="VolumeNotFoundException">A volume was named and there is none.</exception>
    public static async Task<VolumeState> ExclusiveAsync(NpgsqlConnection connection, NpgsqlTransaction transaction, long? volumeId, bool forUpdate, CancellationToken cancellationToken)
    {
        using (var exclusive = new NpgsqlCommand(PgSql.LockExclusive, connection, transaction))
        {
            await exclusive.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }

        if (volumeId is not { } id)
        {
            return VolumeState.Temporary;
        }

        using var read = Command(forUpdate ? PgSql.VolumeStateForUpdate : PgSql.VolumeState, connection, transaction, Id(id));
        return await read.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is string text
            ? VolumeRules.Parse(text, id)
            : throw new VolumeNotFoundException(id);
    }
}
