using BlockDb.PostgreSql.Schema;
using Npgsql;
using NpgsqlTypes;

namespace BlockDb.PostgreSql.Sessions;

/// <summary>
/// The index's operations as statements on one connection, inside the caller's transaction or in autocommit when it
/// passes none. Shared by sessions and the shared repository; each operation is one round trip unless its summary
/// says otherwise. Hot statements are prepared by Npgsql's automatic preparation (<c>Max Auto Prepare</c>).
/// </summary>
internal static class PgBlockOps
{
    public static async Task<long?> FindAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[] hash, long size, CancellationToken cancellationToken)
    {
        using var command = Command(PgSql.FindBlock, connection, transaction, hash, size);
        return await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is long id ? id : null;
    }

    /// <summary>Inserts a block; null when it existed (nothing written, no server error, so an open transaction stays usable).</summary>
    public static async Task<long?> InsertAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[] hash, long size, CancellationToken cancellationToken)
    {
        using var command = Command(PgSql.InsertBlock, connection, transaction, hash, size);
        return await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is long id ? id : null;
    }

    /// <summary>
    /// Inserts the block unless it exists, then selects it: both statements in one round trip (an <see cref="NpgsqlBatch"/>).
    /// In READ COMMITTED each statement takes a new snapshot, so the select sees a row a concurrent writer committed
    /// while the insert waited for it (<see href="https://www.postgresql.org/docs/current/transaction-iso.html#XACT-READ-COMMITTED"/>).
    /// <paramref name="returning"/> picks <c>RETURNING "ID"</c> (InsertReturningThenSelect) or the affected-row count
    /// (InsertOrIgnoreThenSelect) to learn whether this call inserted.
    /// </summary>
    public static async Task<SelectXorInsertResult> InsertThenSelectAsync(
        NpgsqlConnection connection, NpgsqlTransaction? transaction, bool returning, byte[] hash, long size, CancellationToken cancellationToken)
    {
        using var batch = new NpgsqlBatch(connection, transaction);
        batch.BatchCommands.Add(BatchCommand(returning ? PgSql.InsertBlock : PgSql.InsertBlockIgnore, hash, size));
        batch.BatchCommands.Add(BatchCommand(PgSql.FindBlock, hash, size));
        var reader = await batch.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        long? inserted = null;
        if (returning)
        {
            // Npgsql skips the results of statements that return no rows: without RETURNING the reader starts on the SELECT.
            if (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
            {
                inserted = reader.GetInt64(0);
            }

            await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
        }

        var found = await reader.ReadAsync(cancellationToken).ConfigureAwait(false)
            ? reader.GetInt64(0)
            : throw new BlockDbException("A block inserted or found by INSERT ... ON CONFLICT DO NOTHING was not found by the SELECT that followed it; was it deleted meanwhile?");
        var created = returning ? inserted is not null : batch.BatchCommands[0].RecordsAffected == 1;
        return new SelectXorInsertResult(found, created);
    }

    /// <summary>
    /// Adds a blockset from keys, under the shared lifecycle lock: the ID, or the 0-based position of the first unknown
    /// block or of the first block of a volume being deleted (nothing written then).
    /// </summary>
    public static Task<BlocksetAdded> AddBlocksetAsync(
        NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[][] hashes, long[] sizes, byte[]? fullHash, CancellationToken cancellationToken)
    {
        var command = new NpgsqlBatchCommand(PgSql.AddBlocksetByKeys);
        command.Parameters.Add(new NpgsqlParameter<byte[][]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bytea, TypedValue = hashes });
        command.Parameters.Add(new NpgsqlParameter<long[]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bigint, TypedValue = sizes });
        command.Parameters.Add(FullHash(fullHash));
        return AddBlocksetAsync(connection, transaction, command, cancellationToken);
    }

    /// <summary>Adds a blockset from block IDs, as the overload by keys does.</summary>
    public static Task<BlocksetAdded> AddBlocksetAsync(
        NpgsqlConnection connection, NpgsqlTransaction? transaction, long[] ids, byte[]? fullHash, CancellationToken cancellationToken)
    {
        var command = new NpgsqlBatchCommand(PgSql.AddBlocksetByIds);
        command.Parameters.Add(new NpgsqlParameter<long[]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bigint, TypedValue = ids });
        command.Parameters.Add(FullHash(fullHash));
        return AddBlocksetAsync(connection, transaction, command, cancellationToken);
    }

    public static async Task<IReadOnlyList<BlocksetBlock>> ListAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long blocksetId, CancellationToken cancellationToken)
    {
        var blocks = new List<BlocksetBlock>();
        using (var command = Command(PgSql.ListBlocksetBlocks, connection, transaction, blocksetId))
        {
            var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
            {
                blocks.Add(new BlocksetBlock(reader.GetInt32(0), reader.GetInt64(1), Convert.ToBase64String(reader.GetFieldValue<byte[]>(2)), reader.GetInt64(3)));
            }
        }

        if (blocks.Count == 0)
        {
            using var exists = Command(PgSql.BlocksetExists, connection, transaction, blocksetId);
            if (await exists.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is null)
            {
                throw new BlocksetNotFoundException(blocksetId);
            }
        }

        return blocks;
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

    public static async Task<BlockDbCounts> CountsAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, CancellationToken cancellationToken)
    {
        using var command = new NpgsqlCommand(PgSql.Counts, connection, transaction);
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        return new BlockDbCounts(reader.GetInt64(0), reader.GetInt64(1), reader.GetInt64(2));
    }

    private static async Task<BlocksetAdded> AddBlocksetAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, NpgsqlBatchCommand command, CancellationToken cancellationToken)
    {
        using var batch = PgLifecycleOps.Locked(connection, transaction, PgLifecycleSql.LockShared, command);
        var reader = await PgLifecycleOps.ReadAfterLockAsync(batch, cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        return new BlocksetAdded(
            reader.IsDBNull(0) ? null : reader.GetInt64(0),
            reader.IsDBNull(1) ? null : checked((int)reader.GetInt64(1) - 1),
            reader.IsDBNull(2) ? null : checked((int)reader.GetInt64(2) - 1));
    }

    /// <summary>Binds a block's hash and size as <c>$1</c> and <c>$2</c>.</summary>
    public static NpgsqlBatchCommand BatchCommand(string sql, byte[] hash, long size)
    {
        var command = new NpgsqlBatchCommand(sql);
        command.Parameters.Add(new NpgsqlParameter<byte[]> { NpgsqlDbType = NpgsqlDbType.Bytea, TypedValue = hash });
        command.Parameters.Add(new NpgsqlParameter<long> { NpgsqlDbType = NpgsqlDbType.Bigint, TypedValue = size });
        return command;
    }

    private static NpgsqlParameter FullHash(byte[]? fullHash) =>
        new() { NpgsqlDbType = NpgsqlDbType.Bytea, Value = (object?)fullHash ?? DBNull.Value };

    private static NpgsqlCommand Command(string sql, NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[] hash, long size)
    {
        var command = new NpgsqlCommand(sql, connection, transaction);
        command.Parameters.Add(new NpgsqlParameter<byte[]> { NpgsqlDbType = NpgsqlDbType.Bytea, TypedValue = hash });
        command.Parameters.Add(new NpgsqlParameter<long> { NpgsqlDbType = NpgsqlDbType.Bigint, TypedValue = size });
        return command;
    }

    private static NpgsqlCommand Command(string sql, NpgsqlConnection connection, NpgsqlTransaction? transaction, long id)
    {
        var command = new NpgsqlCommand(sql, connection, transaction);
        command.Parameters.Add(new NpgsqlParameter<long> { NpgsqlDbType = NpgsqlDbType.Bigint, TypedValue = id });
        return command;
    }

}

/// <summary>What adding a blockset did: its ID, or why not (the 0-based position of the first unknown block, or of the first block of a volume being deleted).</summary>
internal readonly record struct BlocksetAdded(long? Id, int? Missing, int? InDeletedVolume);
