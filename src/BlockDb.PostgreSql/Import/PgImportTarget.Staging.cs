using BlockDb.PostgreSql.Collection;
using BlockDb.PostgreSql.Schema;
using BlockDb.PostgreSql.Volumes;
using BlockDb.Volumes;
using Npgsql;

namespace BlockDb.PostgreSql.Import;

// Staging: the temporary tables and their binary COPY, opened at a transaction's first item, and the set-based merges
// that move what the transaction staged into the index at FlushAsync.
internal sealed partial class PgImportTarget
{
    private const string CreateBlockStaging = """
        CREATE TEMP TABLE "BlockImport" (o bigint NOT NULL, "Hash" bytea NOT NULL, "Size" bigint NOT NULL, "VolumeID" bigint NULL) ON COMMIT DROP
        """;

    /// <summary>Dropped once merged, so a transaction could stage again (at the commit it would go anyway).</summary>
    private const string DropBlockStaging = """DROP TABLE "BlockImport" """;

    private const string CopyBlocks = """COPY "BlockImport" (o, "Hash", "Size", "VolumeID") FROM STDIN (FORMAT BINARY)""";

    /// <summary>
    /// The new blocks, each at its first place in the transaction with that place's volume, only when the volume can
    /// receive blocks; in (hash, size) order. The affected-row count is what was created.
    /// </summary>
    private const string MergeBlocks = """
        INSERT INTO "Block" ("Hash", "Size", "VolumeID")
        SELECT f."Hash", f."Size", f."VolumeID"
        FROM (SELECT DISTINCT ON ("Hash", "Size") "Hash", "Size", "VolumeID" FROM "BlockImport" ORDER BY "Hash", "Size", o) f
        LEFT JOIN "Remotevolume" v ON v."ID" = f."VolumeID"
        WHERE (f."VolumeID" IS NULL OR v."State" NOT IN ('Deleting', 'Deleted'))
          AND NOT EXISTS (SELECT 1 FROM "Block" b WHERE b."Hash" = f."Hash" AND b."Size" = f."Size")
        ORDER BY f."Hash", f."Size"
        ON CONFLICT DO NOTHING
        """;

    /// <summary>
    /// After <see cref="MergeBlocks"/>, in a new snapshot: the first block (input order) still not in the index, whose
    /// volume could not receive it, with that volume and its state (NULL: no such volume). A block that is missing has
    /// such a volume at its first place (the merge inserted every other), so this is the error one call per block gives.
    /// </summary>
    private const string RefusedBlock = """
        SELECT s."VolumeID", v."State" FROM "BlockImport" s LEFT JOIN "Remotevolume" v ON v."ID" = s."VolumeID"
        WHERE s."VolumeID" IS NOT NULL AND (v."ID" IS NULL OR v."State" IN ('Deleting', 'Deleted'))
          AND NOT EXISTS (SELECT 1 FROM "Block" b WHERE b."Hash" = s."Hash" AND b."Size" = s."Size")
        ORDER BY s.o LIMIT 1
        """;

    /// <summary>A blockset is a header row (<c>i</c> = -1: its full hash and length) and one row per block (<c>i</c> its index).</summary>
    private const string CreateBlocksetStaging = """
        CREATE TEMP TABLE "BlocksetImport" (o bigint NOT NULL, i integer NOT NULL, "Hash" bytea NULL, "Size" bigint NULL, "FullHash" bytea NULL, "Length" bigint NULL) ON COMMIT DROP
        """;

    private const string DropBlocksetStaging = """DROP TABLE "BlocksetImport" """;

    private const string CopyBlocksets = """COPY "BlocksetImport" (o, i, "Hash", "Size", "FullHash", "Length") FROM STDIN (FORMAT BINARY)""";

    /// <summary>
    /// The blocksets of the transaction in one statement: <c>k</c> those to create (no full hash, or a full hash and length
    /// neither in the index nor earlier in the transaction), <c>r</c> their blocks resolved, <c>p</c> the first problem in
    /// input order (an unknown block before a block of a volume being deleted, as <see cref="PgSql.FindBlocksAddBlocksets"/>
    /// reports them). Only when there is none are the <c>Blockset</c> rows and entries written; each blockset's ID is drawn
    /// from its identity column's own sequence first (so entries can name it; no writer picks an ID of its own). Returns the
    /// blocksets written and the problem: its blockset's place, the block's index, whether it is unknown, its hash and size.
    /// </summary>
    private const string MergeBlocksets = """
        WITH h AS (SELECT o, "FullHash" AS fh, "Length" AS len, row_number() OVER (PARTITION BY "FullHash", "Length" ORDER BY o) AS n
                   FROM "BlocksetImport" WHERE i < 0),
        k AS (SELECT o, fh, len FROM h
              WHERE fh IS NULL OR (n = 1 AND NOT EXISTS (SELECT 1 FROM "Blockset" x WHERE x."FullHash" = h.fh AND x."Length" = h.len))),
        r AS (SELECT s.o, s.i, s."Hash" AS bh, s."Size" AS bs, b."ID" AS id, v."State" AS st
              FROM k JOIN "BlocksetImport" s ON s.o = k.o AND s.i >= 0
              LEFT JOIN "Block" b ON b."Hash" = s."Hash" AND b."Size" = s."Size" LEFT JOIN "Remotevolume" v ON v."ID" = b."VolumeID"),
        p AS (SELECT o, i, id IS NULL AS missing, bh, bs FROM r WHERE id IS NULL OR st IN ('Deleting', 'Deleted') ORDER BY o, id IS NOT NULL, i LIMIT 1),
        n AS (SELECT k.o, k.fh, k.len, nextval(pg_get_serial_sequence('"Blockset"', 'ID')) AS id FROM k WHERE NOT EXISTS (SELECT 1 FROM p) ORDER BY k.o),
        ws AS (INSERT INTO "Blockset" ("ID", "Length", "FullHash") OVERRIDING SYSTEM VALUE SELECT id, len, fh FROM n),
        we AS (INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") SELECT n.id, r.i, r.id FROM n JOIN r ON r.o = n.o)
        SELECT (SELECT count(*) FROM n), p.o, p.i, p.missing, p.bh, p.bs FROM (SELECT 1) one LEFT JOIN p ON true
        """;

    /// <summary>The open <c>COPY</c> of <paramref name="kind"/>: opens the transaction, its staging table and the <c>COPY</c> when this is the first item.</summary>
    private async ValueTask<NpgsqlBinaryImporter> StageAsync(Staged kind, CancellationToken cancellationToken)
    {
        if (_copy is { } open)
        {
            return _staged == kind
                ? open
                : throw new InvalidOperationException("An import transaction holds blocks or blocksets, not both; flush and commit one before the other.");
        }

        var connection = _connection!;
        _transaction ??= await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
        using (var create = new NpgsqlCommand(kind == Staged.Blocks ? CreateBlockStaging : CreateBlocksetStaging, connection, _transaction))
        {
            await create.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }

        _copy = await connection.BeginBinaryImportAsync(kind == Staged.Blocks ? CopyBlocks : CopyBlocksets, cancellationToken).ConfigureAwait(false);
        (_staged, _items) = (kind, 0);
        return _copy;
    }

    /// <summary>How many times a merge runs before the deadlock that aborted it (40P01) fails the import transaction.</summary>
    private const int MergeAttempts = 8;

    private const string MergeSavepoint = "blockdb_merge";

    /// <summary>
    /// Runs a merge after a savepoint; when the server aborts it as a deadlock's victim (SQLSTATE 40P01), takes the
    /// transaction back to the savepoint (the staged rows stay; what the merge inserted and locked is undone, so the
    /// other transaction goes on) and runs the merge again on a new snapshot, up to <see cref="MergeAttempts"/> times.
    /// The merges take their rows in one order, so imports never wait for each other in a cycle; a session's batch holds
    /// the blocks of many calls, taken in its callers' order, until it commits, and no order inside the merge avoids a
    /// cycle with it. PostgreSQL advises retrying a deadlock failure
    /// (<see href="https://www.postgresql.org/docs/current/mvcc-serialization-failure-handling.html"/>,
    /// <see href="https://www.postgresql.org/docs/current/explicit-locking.html#LOCKING-DEADLOCKS"/>).
    /// </summary>
    private static async Task<long> MergeAsync(NpgsqlConnection connection, NpgsqlTransaction transaction, Func<NpgsqlConnection, NpgsqlTransaction, Task<long>> merge)
    {
        for (var attempt = 1; ; attempt++)
        {
            await transaction.SaveAsync(MergeSavepoint, CancellationToken.None).ConfigureAwait(false);
            try
            {
                return await merge(connection, transaction).ConfigureAwait(false);
            }
            catch (PostgresException e) when (e.SqlState == PostgresErrorCodes.DeadlockDetected && attempt < MergeAttempts)
            {
                await transaction.RollbackAsync(MergeSavepoint, CancellationToken.None).ConfigureAwait(false);
            }
        }
    }

    private static async Task<long> MergeBlocksAsync(NpgsqlConnection connection, NpgsqlTransaction transaction)
    {
        using var batch = PgLifecycleLock.Locked(connection, transaction, PgSql.LockShared, new NpgsqlBatchCommand(MergeBlocks), new NpgsqlBatchCommand(RefusedBlock), new NpgsqlBatchCommand(DropBlockStaging));
        long? refusedVolume = null;
        VolumeState? refusedState = null;
        var reader = await PgLifecycleLock.ReadAfterLockAsync(batch, CancellationToken.None).ConfigureAwait(false);
        await using (reader.ConfigureAwait(false))
        {
            // The merge returns no rows (Npgsql skips its result): the reader is on the refused-block query.
            if (await reader.ReadAsync(CancellationToken.None).ConfigureAwait(false))
            {
                refusedVolume = reader.GetInt64(0);
                refusedState = reader.IsDBNull(1) ? null : VolumeRules.Parse(reader.GetString(1), refusedVolume.Value);
            }
        }

        return refusedVolume is { } volume
            ? throw PgVolumes.Unrecordable(volume, refusedState) ?? new BlockDbException($"Volume {volume} refused a block of the import; nothing of the import transaction was written.")
            : batch.BatchCommands[1].RecordsAffected;
    }

    private static async Task<long> MergeBlocksetsAsync(NpgsqlConnection connection, NpgsqlTransaction transaction)
    {
        using var batch = PgLifecycleLock.Locked(connection, transaction, PgSql.LockShared, new NpgsqlBatchCommand(MergeBlocksets), new NpgsqlBatchCommand(DropBlocksetStaging));
        var reader = await PgLifecycleLock.ReadAfterLockAsync(batch, CancellationToken.None).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        await reader.ReadAsync(CancellationToken.None).ConfigureAwait(false);
        if (reader.IsDBNull(1))
        {
            return reader.GetInt64(0);
        }

        var (place, index, missing) = (reader.GetInt64(1), reader.GetInt32(2), reader.GetBoolean(3));
        var block = $"hash {Convert.ToBase64String(reader.GetFieldValue<byte[]>(4))}, size {reader.GetInt64(5)}";
        throw missing
            ? new BlockNotFoundException($"Block {index} of blockset {place} of the import transaction ({block}) is not in the index; import the blocks first. Nothing of the import transaction was written.", index)
            : new BlockDbConflictException($"Block {index} of blockset {place} of the import transaction ({block}) is in a volume that is being deleted; record the block again in a live volume (MoveBlocksAsync) before a blockset names it. Nothing of the import transaction was written.");
    }
}
