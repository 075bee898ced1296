using BlockDb.PostgreSql.Schema;
using BlockDb.Volumes;
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

    /// <summary>Looks many blocks up in one round trip: their IDs in order (null: not in the index). Writes nothing.</summary>
    public static async Task<ManyOutcome> FindManyAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[][] hashes, long[] sizes, CancellationToken cancellationToken)
    {
        using var command = new NpgsqlCommand(PgSql.FindBlocks, connection, transaction);
        AddKeys(command.Parameters, hashes, sizes);
        command.Parameters.Add(NullableId(null));
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        var (ids, _) = await ReadIdsAsync(reader, hashes.Length, cancellationToken).ConfigureAwait(false);
        return new ManyOutcome(ids, null, null, null);
    }

    /// <summary>
    /// Select-xor-insert of many blocks, and (when <paramref name="blockset"/>) a blockset made of them, in one round trip
    /// (an <see cref="NpgsqlBatch"/>, one transaction: the caller's, or an implicit one): the shared lifecycle lock when
    /// a volume is named or a blockset is written (as the one-block calls take it), <see cref="PgSql.InsertBlocks"/>,
    /// <see cref="PgSql.FindBlocks"/> in a new snapshot (so it sees a block a concurrent writer committed while the insert
    /// waited for it), then <see cref="PgSql.AddBlocksetByKeys"/>, which resolves the same keys again and writes the
    /// blockset only when all are known and none lies in a volume being deleted. No statement fails in normal operation:
    /// a refusal (a volume that cannot receive blocks, a blockset that cannot be written) comes back as data, and an open
    /// batch stays usable.
    /// </summary>
    public static async Task<ManyOutcome> InsertManyAsync(
        NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[][] hashes, long[] sizes, long? volumeId, bool blockset, byte[]? fullHash, CancellationToken cancellationToken)
    {
        using var batch = new NpgsqlBatch(connection, transaction);
        var locked = volumeId is not null || blockset;
        if (locked)
        {
            batch.BatchCommands.Add(new NpgsqlBatchCommand(PgLifecycleSql.LockShared));
        }

        var insert = new NpgsqlBatchCommand(PgSql.InsertBlocks);
        AddKeys(insert.Parameters, hashes, sizes);
        insert.Parameters.Add(NullableId(volumeId));
        batch.BatchCommands.Add(insert);
        var find = new NpgsqlBatchCommand(PgSql.FindBlocks);
        AddKeys(find.Parameters, hashes, sizes);
        find.Parameters.Add(NullableId(volumeId));
        batch.BatchCommands.Add(find);
        if (blockset)
        {
            var add = new NpgsqlBatchCommand(PgSql.AddBlocksetByKeys);
            AddKeys(add.Parameters, hashes, sizes);
            add.Parameters.Add(FullHash(fullHash));
            batch.BatchCommands.Add(add);
        }

        var reader = await batch.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        if (locked)
        {
            await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
        }

        var created = new HashSet<long>();
        while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            created.Add(reader.GetInt64(0));
        }

        await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
        var (ids, volumeState) = await ReadIdsAsync(reader, hashes.Length, cancellationToken).ConfigureAwait(false);
        BlocksetAdded? added = null;
        if (blockset)
        {
            await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
            added = await ReadBlocksetAddedAsync(reader, cancellationToken).ConfigureAwait(false);
        }

        return new ManyOutcome(ids, created, volumeState, added);
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
        return await ReadBlocksetAddedAsync(reader, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The row of a blockset statement (<see cref="PgSql.AddBlocksetByKeys"/>, <see cref="PgSql.AddBlocksetByIds"/>).</summary>
    private static async Task<BlocksetAdded> ReadBlocksetAddedAsync(NpgsqlDataReader reader, CancellationToken cancellationToken)
    {
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        return new BlocksetAdded(
            reader.IsDBNull(0) ? null : reader.GetInt64(0),
            reader.IsDBNull(1) ? null : checked((int)reader.GetInt64(1) - 1),
            reader.IsDBNull(2) ? null : checked((int)reader.GetInt64(2) - 1));
    }

    /// <summary>The rows of <see cref="PgSql.FindBlocks"/>: one ID (or null) per block in order, and the named volume's state.</summary>
    private static async Task<(long?[] Ids, string? VolumeState)> ReadIdsAsync(NpgsqlDataReader reader, int count, CancellationToken cancellationToken)
    {
        var ids = new long?[count];
        string? volumeState = null;
        var i = 0;
        while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            ids[i++] = reader.IsDBNull(0) ? null : reader.GetInt64(0);
            volumeState ??= reader.IsDBNull(1) ? null : reader.GetString(1);
        }

        return i == count ? (ids, volumeState) : throw new BlockDbException($"The server returned {i} rows for {count} blocks; expected one per block.");
    }

    /// <summary>Binds the hashes and sizes of many blocks as <c>$1</c> (<c>bytea[]</c>) and <c>$2</c> (<c>bigint[]</c>).</summary>
    private static void AddKeys(NpgsqlParameterCollection parameters, byte[][] hashes, long[] sizes)
    {
        parameters.Add(new NpgsqlParameter<byte[][]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bytea, TypedValue = hashes });
        parameters.Add(new NpgsqlParameter<long[]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bigint, TypedValue = sizes });
    }

    private static NpgsqlParameter NullableId(long? id) =>
        new() { NpgsqlDbType = NpgsqlDbType.Bigint, Value = (object?)id ?? DBNull.Value };

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

/// <summary>What a call over many blocks found and did (<see cref="PgBlockOps.FindManyAsync"/>, <see cref="PgBlockOps.InsertManyAsync"/>).</summary>
/// <param name="Ids">Each block's ID in input order; null: not in the index (a volume refused it, or it was deleted meanwhile).</param>
/// <param name="Created">The IDs this call inserted (null: it only looked).</param>
/// <param name="VolumeText">The named volume's state as the server spells it (null: none named, or no such volume).</param>
/// <param name="Blockset">What the blockset statement did, when there was one.</param>
internal sealed record ManyOutcome(long?[] Ids, HashSet<long>? Created, string? VolumeText, BlocksetAdded? Blockset)
{
    /// <summary>Whether every block has an ID.</summary>
    public bool AllFound => Array.TrueForAll(Ids, static id => id is not null);

    /// <summary>The writes of the call, as a commit batch counts them: one per new block, one for a blockset written.</summary>
    public int Writes => (Created?.Count ?? 0) + (Blockset?.Id is not null ? 1 : 0);

    /// <summary>
    /// Puts each block's result at its index (a block listed twice is created at its first place only) and returns how
    /// many were created; throws for the first block without an ID: the named volume's refusal
    /// (<see cref="VolumeNotFoundException"/>, <see cref="BlockDbConflictException"/>) with the results before it filled,
    /// as one call per block would leave them.
    /// </summary>
    public int Fill(Span<SelectXorInsertResult> results, long? volumeId, byte[][] hashes, long[] sizes)
    {
        var claimed = Created is { Count: > 0 } ? new HashSet<long>() : null;
        var created = 0;
        for (var i = 0; i < Ids.Length; i++)
        {
            if (Ids[i] is not { } id)
            {
                var state = VolumeText is null || volumeId is null ? (VolumeState?)null : VolumeRules.Parse(VolumeText, volumeId.Value);
                throw (volumeId is { } volume ? PgLifecycleOps.Unrecordable(volume, state) : null)
                    ?? new BlockDbException($"Block {i} (hash {Convert.ToBase64String(hashes[i])}, size {sizes[i]}) was neither inserted nor found; was it deleted meanwhile?");
            }

            var isNew = claimed is not null && Created!.Contains(id) && claimed.Add(id);
            results[i] = new SelectXorInsertResult(id, isNew);
            created += isNew ? 1 : 0;
        }

        return created;
    }
}
