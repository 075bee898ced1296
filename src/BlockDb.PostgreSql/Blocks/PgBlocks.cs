using BlockDb.PostgreSql.Blocksets;
using BlockDb.PostgreSql.Schema;
using BlockDb.Volumes;
using Npgsql;
using NpgsqlTypes;
using static BlockDb.PostgreSql.Collection.PgLifecycleLock;
using static BlockDb.PostgreSql.PgCommands;

namespace BlockDb.PostgreSql.Blocks;

/// <summary>
/// The block operations as statements on one connection, inside the caller's transaction or in autocommit when it
/// passes none. Shared by sessions and the shared session; each operation is one round trip unless its summary
/// says otherwise. The unique (Hash, Size) index keeps duplicates out, so select-xor-insert takes no lock [P1]. Hot statements are prepared by Npgsql's automatic preparation (<c>Max Auto Prepare</c>).
/// </summary>
internal static class PgBlocks
{
    public static async Task<long?> FindAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[] hash, long size, CancellationToken cancellationToken)
    {
        using var command = Command(PgSql.FindBlock, connection, transaction, hash, size);
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
        command.Parameters.Add(VolumeIds(null, hashes.Length));
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        var (ids, _) = await ReadIdsAsync(reader, hashes.Length, cancellationToken).ConfigureAwait(false);
        return new ManyOutcome(ids, null, null, null);
    }

    /// <summary>
    /// Select-xor-insert of many blocks, and (when <paramref name="blockset"/>) a blockset made of them, in one round trip
    /// (an <see cref="NpgsqlBatch"/>, one transaction: the caller's, or an implicit one): the shared lifecycle lock,
    /// <see cref="PgSql.InsertBlocks"/>, then <see cref="PgSql.FindBlocks"/> in a new snapshot (so it sees a block a
    /// concurrent writer committed while the insert waited for it), or for a blockset
    /// <see cref="PgSql.FindBlocksAddBlocksets"/>, which with the same one lookup per key writes the blockset only when all
    /// are known and none lies in a volume being deleted. No statement fails in normal operation: a refusal (a volume that
    /// cannot receive blocks, a blockset that cannot be written) comes back as data, and an open batch stays usable. The
    /// call is whole: a refused volume inserts no block, a blockset refused for a found block in a volume being deleted
    /// inserts none of its new blocks (its blocks carry blockset number 1 in <see cref="PgSql.InsertBlocks"/>), and the
    /// lock keeps garbage collection (which takes it exclusive) from deleting a found block between the insert and the
    /// find, so no block goes missing after others were inserted.
    /// </summary>
    public static async Task<ManyOutcome> InsertManyAsync(
        NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[][] hashes, long[] sizes, long? volumeId, bool blockset, byte[]? fullHash, CancellationToken cancellationToken)
    {
        using var batch = new NpgsqlBatch(connection, transaction);
        batch.BatchCommands.Add(new NpgsqlBatchCommand(PgSql.LockShared));

        var insert = new NpgsqlBatchCommand(PgSql.InsertBlocks);
        AddKeys(insert.Parameters, hashes, sizes);
        insert.Parameters.Add(VolumeIds(volumeId, hashes.Length));
        var numbers = blockset ? OneBlockset(hashes.Length) : null;
        insert.Parameters.Add(BlocksetNumbers(numbers));
        batch.BatchCommands.Add(insert);
        if (numbers is not null)
        {
            batch.BatchCommands.Add(FindAndAdd(hashes, sizes, VolumeIds(volumeId, hashes.Length), numbers, [fullHash]));
        }
        else
        {
            var find = new NpgsqlBatchCommand(PgSql.FindBlocks);
            AddKeys(find.Parameters, hashes, sizes);
            find.Parameters.Add(VolumeIds(volumeId, hashes.Length));
            batch.BatchCommands.Add(find);
        }

        var reader = await batch.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
        var created = new HashSet<long>();
        while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            created.Add(reader.GetInt64(0));
        }

        await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
        if (!blockset)
        {
            var (ids, volumeState) = await ReadIdsAsync(reader, hashes.Length, cancellationToken).ConfigureAwait(false);
            return new ManyOutcome(ids, created, volumeState, null);
        }

        var found = new long?[hashes.Length];
        var states = new string?[hashes.Length];
        var added = new BlocksetAdded[1];
        await ReadFoundAndAddedAsync(reader, found, states, added, cancellationToken).ConfigureAwait(false);
        return new ManyOutcome(found, created, Array.Find(states, static s => s is not null), added[0]);
    }

    /// <summary><see cref="PgSql.FindBlocksAddBlocksets"/> with its parameters: the keys, each block's named volume, blockset number (1-based, null: none) and each blockset's full hash.</summary>
    public static NpgsqlBatchCommand FindAndAdd(byte[][] hashes, long[] sizes, NpgsqlParameter volumes, int?[] numbers, byte[]?[] fullHashes)
    {
        var command = new NpgsqlBatchCommand(PgSql.FindBlocksAddBlocksets);
        AddKeys(command.Parameters, hashes, sizes);
        command.Parameters.Add(volumes);
        command.Parameters.Add(new NpgsqlParameter<int?[]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Integer, TypedValue = numbers });
        command.Parameters.Add(new NpgsqlParameter<byte[]?[]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bytea, TypedValue = fullHashes });
        return command;
    }

    /// <summary>
    /// The rows of <see cref="PgSql.FindBlocksAddBlocksets"/>: each block's ID (null: not in the index) and named volume's
    /// state into <paramref name="ids"/> and <paramref name="states"/>, each blockset's outcome into <paramref name="added"/>.
    /// </summary>
    /// <exception cref="BlockDbException">The server returned another number of rows than one per block and per blockset.</exception>
    public static async Task ReadFoundAndAddedAsync(NpgsqlDataReader reader, long?[] ids, string?[] states, BlocksetAdded[] added, CancellationToken cancellationToken)
    {
        int blocks = 0, blocksets = 0;
        while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            long? id = reader.IsDBNull(2) ? null : reader.GetInt64(2);
            if (reader.GetInt32(0) == 0)
            {
                if (blocks < ids.Length)
                {
                    ids[blocks] = id;
                    states[blocks] = reader.IsDBNull(3) ? null : reader.GetString(3);
                }

                blocks++;
            }
            else
            {
                if (blocksets < added.Length)
                {
                    added[blocksets] = new BlocksetAdded(
                        id,
                        reader.IsDBNull(4) ? null : checked((int)reader.GetInt64(4) - 1),
                        reader.IsDBNull(5) ? null : checked((int)reader.GetInt64(5) - 1));
                }

                blocksets++;
            }
        }

        if (blocks != ids.Length || blocksets != added.Length)
        {
            throw new BlockDbException($"The server returned {blocks} block rows and {blocksets} blockset rows for {ids.Length} blocks and {added.Length} blocksets; expected one each.");
        }
    }

    /// <summary>Blockset number 1 for each of <paramref name="count"/> blocks: the blocks of one blockset.</summary>
    private static int?[] OneBlockset(int count)
    {
        var numbers = new int?[count];
        Array.Fill(numbers, 1);
        return numbers;
    }

    public static async Task<BlockDbCounts> CountsAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, CancellationToken cancellationToken)
    {
        using var command = new NpgsqlCommand(PgSql.Counts, connection, transaction);
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        return new BlockDbCounts(reader.GetInt64(0), reader.GetInt64(1), reader.GetInt64(2));
    }

    /// <summary>The rows of <see cref="PgSql.FindBlocks"/>: one ID (or null) per block in order, and the named volume's state.</summary>
    public static async Task<(long?[] Ids, string? VolumeState)> ReadIdsAsync(NpgsqlDataReader reader, int count, CancellationToken cancellationToken)
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

    /// <summary>
    /// Inserts a block recorded in a volume under the shared lock, then finds it: the new ID or the found one, whether
    /// this call created it, and the volume's state (null: no such volume).
    /// </summary>
    public static async Task<(long? Id, bool Created, VolumeState? Volume)> InsertInVolumeAsync(
        NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[] hash, long size, long volumeId, CancellationToken cancellationToken)
    {
        var insert = PgCommands.BatchCommand(PgSql.InsertBlockInVolume, hash, size);
        insert.Parameters.Add(Id(volumeId));
        using var batch = Locked(connection, transaction, PgSql.LockShared, insert, PgCommands.BatchCommand(PgSql.FindBlock, hash, size));
        var reader = await ReadAfterLockAsync(batch, cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        long? created = reader.IsDBNull(0) ? null : reader.GetInt64(0);
        VolumeState? state = reader.IsDBNull(1) ? null : VolumeRules.Parse(reader.GetString(1), volumeId);
        if (created is not null)
        {
            return (created, created is not null, state);
        }

        await reader.NextResultAsync(cancellationToken).ConfigureAwait(false);
        return (await reader.ReadAsync(cancellationToken).ConfigureAwait(false) ? reader.GetInt64(0) : null, false, state);
    }

    public static async Task<BlockInfo> GetBlockAsync(NpgsqlConnection connection, NpgsqlTransaction? transaction, long blockId, CancellationToken cancellationToken)
    {
        using var command = Command(PgSql.GetBlock, connection, transaction, Id(blockId));
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        return await reader.ReadAsync(cancellationToken).ConfigureAwait(false)
            ? new BlockInfo(blockId, BlockKey.Stored(new BlockHash(reader.GetFieldValue<byte[]>(0)), reader.GetInt64(1)), reader.IsDBNull(2) ? null : reader.GetInt64(2))
            : throw new BlockNotFoundException(blockId);
    }
}
