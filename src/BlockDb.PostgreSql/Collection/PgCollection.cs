using BlockDb.PostgreSql.Schema;
using Npgsql;
using NpgsqlTypes;
using static BlockDb.PostgreSql.Collection.PgLifecycleLock;
using static BlockDb.PostgreSql.PgCommands;

namespace BlockDb.PostgreSql.Collection;

/// <summary>Garbage collection on one connection, under the exclusive lifecycle lock (<see cref="PgLifecycleLock"/>).</summary>
internal static class PgCollection
{
    /// <summary>Deletes the unreferenced blocks under the exclusive lock: all, or one volume's (unknown volume: <see cref="VolumeNotFoundException"/>).</summary>
    public static Task<CollectResult> CollectAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long? volumeId, CancellationToken cancellationToken) =>
        InTransactionAsync(connection, transaction, async (tx, ct) =>
        {
            await ExclusiveAsync(connection, tx, volumeId, forUpdate: false, ct).ConfigureAwait(false);
            using var collect = Command(PgSql.Collect, connection, tx, new NpgsqlParameter { NpgsqlDbType = NpgsqlDbType.Bigint, Value = (object?)volumeId ?? DBNull.Value });
            var reader = await collect.ExecuteReaderAsync(ct).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            var byVolume = new List<VolumeCollected>();
            while (await reader.ReadAsync(ct).ConfigureAwait(false))
            {
                byVolume.Add(new VolumeCollected(reader.IsDBNull(0) ? null : reader.GetInt64(0), reader.GetInt64(1), reader.GetInt64(2)));
            }

            return new CollectResult(byVolume.Sum(v => v.Blocks), byVolume.Sum(v => v.Bytes), byVolume);
        }, cancellationToken);
}
