using BlockDb.PostgreSql.Collection;
using BlockDb.PostgreSql.Schema;
using Npgsql;
using NpgsqlTypes;
using static BlockDb.PostgreSql.PgCommands;

namespace BlockDb.PostgreSql.Blocksets;

/// <summary>
/// The blockset operations as statements on one connection, inside the caller's transaction or in autocommit when it
/// passes none; adding one takes the shared lifecycle lock (<see cref="PgLifecycleLock"/>).
/// </summary>
internal static class PgBlocksets
{
    /// <summary>Up to <paramref name="into"/>'s length of a blockset's blocks from <paramref name="fromIndex"/> on, hashes as bytes; how many.</summary>
    public static async Task<int> ListAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long blocksetId, int fromIndex, Memory<BlocksetBlock> into, CancellationToken cancellationToken)
    {
        var count = 0;
        var hash = new byte[BlockHash.MaxBytes]; // one per call, not per block
        using (var command = Command(PgSql.ListBlocksetBlocksFrom, connection, transaction, blocksetId))
        {
            command.Parameters.Add(new NpgsqlParameter<int> { NpgsqlDbType = NpgsqlDbType.Integer, TypedValue = fromIndex });
            command.Parameters.Add(new NpgsqlParameter<int> { NpgsqlDbType = NpgsqlDbType.Integer, TypedValue = into.Length });
            var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            while (count < into.Length && await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
            {
                into.Span[count++] = new BlocksetBlock(reader.GetInt32(0), reader.GetInt64(1), BlockKey.Stored(new BlockHash(hash.AsSpan(0, (int)reader.GetBytes(2, 0, hash, 0, hash.Length))), reader.GetInt64(3)));
            }
        }

        if (count == 0)
        {
            using var exists = Command(PgSql.BlocksetExists, connection, transaction, blocksetId);
            if (await exists.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is null)
            {
                throw new BlocksetNotFoundException(blocksetId);
            }
        }

        return count;
    }

    public static async Task<BlocksetInfo> GetBlocksetAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long blocksetId, CancellationToken cancellationToken)
    {
        using var command = Command(PgSql.GetBlockset, connection, transaction, blocksetId);
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        if (!await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            throw new BlocksetNotFoundException(blocksetId);
        }

        var fullHash = reader.IsDBNull(1) ? null : Convert.ToBase64String(reader.GetFieldValue<byte[]>(1));
        return new BlocksetInfo(blocksetId, reader.GetInt64(0), fullHash, checked((int)reader.GetInt64(2)));
    }

    public static async Task<long?> FindBlocksetAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[] fullHash, long length, CancellationToken cancellationToken)
    {
        using var command = Command(PgSql.FindBlockset, connection, transaction, new NpgsqlParameter<byte[]> { NpgsqlDbType = NpgsqlDbType.Bytea, TypedValue = fullHash }, Id(length));
        return await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is long id ? id : null;
    }

    /// <summary>Deletes a blockset and its entries; false when there is none.</summary>
    public static async Task<bool> DeleteBlocksetAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long blocksetId, CancellationToken cancellationToken)
    {
        using var command = Command(PgSql.DeleteBlockset, connection, transaction, Id(blocksetId));
        return await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is long;
    }
}
