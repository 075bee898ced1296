using BlockDb.Import;
using BlockDb.PostgreSql.Collection;
using BlockDb.PostgreSql.Schema;
using BlockDb.PostgreSql.Volumes;
using BlockDb.Volumes;
using Npgsql;
using NpgsqlTypes;

namespace BlockDb.PostgreSql.Import;

/// <summary>
/// The PostgreSQL provider's bulk import target (<see cref="IBlockDatabase.ImportBlocksAsync"/>,
/// <see cref="IBlockDatabase.ImportBlocksetsAsync"/>, driven by <see cref="BulkImport"/>): one connection and one
/// transaction per import transaction. The items of a transaction stream to the server by binary <c>COPY</c> into a
/// temporary table as they arrive (<see href="https://www.postgresql.org/docs/current/sql-copy.html"/>); at
/// <see cref="FlushAsync"/> set-based statements move them into the index, then the transaction commits. All or nothing
/// per transaction: a failure, a cancellation or a crash before the commit leaves nothing of it.
/// </summary>
/// <remarks>
/// Same meaning as adding the items one by one (through the session's own calls): a block already in the index, or
/// earlier in the transaction, is skipped and keeps its volume; a new block's volume must exist and not be
/// <c>Deleting</c>/<c>Deleted</c> (<see cref="VolumeNotFoundException"/>, <see cref="BlockDbConflictException"/> for the
/// first such block in input order); a blockset whose full hash and length exist (or came earlier in the transaction) is
/// skipped, and one that names an unknown block or a block of a volume being deleted fails the transaction
/// (<see cref="BlockNotFoundException"/> with its position, <see cref="BlockDbConflictException"/>). The shared lifecycle
/// lock is taken before the merge, as the one-item calls take it. Blocks go in (hash, size) order under
/// <c>ON CONFLICT DO NOTHING</c>: two imports of overlapping blocks at once wait for each other in one order, each block
/// is stored once, and both see its one ID.
/// </remarks>
internal sealed class PgImportTarget : IImportTarget
{
    private const int CancellationStride = 256;

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
    /// input order (an unknown block before a block of a volume being deleted, as <see cref="PgSql.AddBlocksetByKeys"/>
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

    private readonly SemaphoreSlim _gate = new(1, 1);
    private readonly string _operation;
    private readonly byte[] _hash = new byte[BlockHash.MaxBytes];
    private NpgsqlConnection? _connection;
    private NpgsqlTransaction? _transaction;
    private NpgsqlBinaryImporter? _copy;
    private Staged _staged;
    private long _items;
    private bool _disposed;

    private PgImportTarget(NpgsqlConnection connection, string operation)
    {
        _connection = connection;
        _operation = operation;
    }

    private enum Staged
    {
        Nothing,
        Blocks,
        Blocksets,
    }

    /// <summary>Opens the import's own connection from the pool.</summary>
    /// <exception cref="BlockDbException">The server failed; its SQLSTATE is kept.</exception>
    public static async ValueTask<PgImportTarget> OpenAsync(PgContext context, string operation, CancellationToken cancellationToken)
    {
        try
        {
            return new PgImportTarget(await context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false), operation);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, operation);
        }
    }

    /// <summary>Streams the blocks into the transaction's <c>COPY</c>; they are merged at <see cref="FlushAsync"/>.</summary>
    public async ValueTask<int> AddBlocksAsync(ReadOnlyMemory<BinaryBlockKey> blocks, long? volumeId, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        await EnterAsync().ConfigureAwait(false);
        try
        {
            var copy = await StageAsync(Staged.Blocks, cancellationToken).ConfigureAwait(false);
            for (var i = 0; i < blocks.Length; i++)
            {
                if (i % CancellationStride == 0)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                }

                var block = blocks.Span[i];
                await copy.StartRowAsync(CancellationToken.None).ConfigureAwait(false);
                await copy.WriteAsync(_items++, NpgsqlDbType.Bigint, CancellationToken.None).ConfigureAwait(false);
                await copy.WriteAsync(Hash(block.Hash), NpgsqlDbType.Bytea, CancellationToken.None).ConfigureAwait(false);
                await copy.WriteAsync(block.Size, NpgsqlDbType.Bigint, CancellationToken.None).ConfigureAwait(false);
                await WriteNullableAsync(copy, volumeId).ConfigureAwait(false);
            }

            return 0;
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, _operation);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Streams the blockset (a header row, then a row per block) into the transaction's <c>COPY</c>; merged at <see cref="FlushAsync"/>.</summary>
    public async ValueTask<bool> AddBlocksetAsync(ImportBlockset blockset, long length, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(blockset);
        cancellationToken.ThrowIfCancellationRequested();
        await EnterAsync().ConfigureAwait(false);
        try
        {
            var copy = await StageAsync(Staged.Blocksets, cancellationToken).ConfigureAwait(false);
            var place = _items++;
            await copy.StartRowAsync(CancellationToken.None).ConfigureAwait(false);
            await copy.WriteAsync(place, NpgsqlDbType.Bigint, CancellationToken.None).ConfigureAwait(false);
            await copy.WriteAsync(-1, NpgsqlDbType.Integer, CancellationToken.None).ConfigureAwait(false);
            await copy.WriteNullAsync(CancellationToken.None).ConfigureAwait(false);
            await copy.WriteNullAsync(CancellationToken.None).ConfigureAwait(false);
            if (blockset.FullHash.IsEmpty)
            {
                await copy.WriteNullAsync(CancellationToken.None).ConfigureAwait(false);
            }
            else
            {
                await copy.WriteAsync(Hash(blockset.FullHash), NpgsqlDbType.Bytea, CancellationToken.None).ConfigureAwait(false);
            }

            await copy.WriteAsync(length, NpgsqlDbType.Bigint, CancellationToken.None).ConfigureAwait(false);
            for (var i = 0; i < blockset.Blocks.Count; i++)
            {
                if (i % CancellationStride == CancellationStride - 1)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                }

                var block = blockset.Blocks[i];
                await copy.StartRowAsync(CancellationToken.None).ConfigureAwait(false);
                await copy.WriteAsync(place, NpgsqlDbType.Bigint, CancellationToken.None).ConfigureAwait(false);
                await copy.WriteAsync(i, NpgsqlDbType.Integer, CancellationToken.None).ConfigureAwait(false);
                await copy.WriteAsync(Hash(block.Hash), NpgsqlDbType.Bytea, CancellationToken.None).ConfigureAwait(false);
                await copy.WriteAsync(block.Size, NpgsqlDbType.Bigint, CancellationToken.None).ConfigureAwait(false);
                await copy.WriteNullAsync(CancellationToken.None).ConfigureAwait(false);
                await copy.WriteNullAsync(CancellationToken.None).ConfigureAwait(false);
            }

            return false;
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, _operation);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Ends the transaction's <c>COPY</c> and merges what it staged into the index; returns how many items were created.</summary>
    public async ValueTask<long> FlushAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        await EnterAsync().ConfigureAwait(false);
        try
        {
            if (_copy is not { } copy)
            {
                return 0;
            }

            _copy = null;
            await copy.CompleteAsync(CancellationToken.None).ConfigureAwait(false);
            await copy.DisposeAsync().ConfigureAwait(false);
            var staged = _staged;
            _staged = Staged.Nothing;
            _items = 0;
            return staged == Staged.Blocks
                ? await MergeBlocksAsync(_connection!, _transaction!).ConfigureAwait(false)
                : await MergeBlocksetsAsync(_connection!, _transaction!).ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, _operation);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Commits the import transaction, if one is open (after <see cref="FlushAsync"/>).</summary>
    public async ValueTask CommitAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        await EnterAsync().ConfigureAwait(false);
        try
        {
            if (_copy is not null)
            {
                throw new InvalidOperationException("The import transaction still has staged items; FlushAsync them before the commit.");
            }

            if (_transaction is { } transaction)
            {
                _transaction = null;
                await using (transaction.ConfigureAwait(false))
                {
                    await transaction.CommitAsync(CancellationToken.None).ConfigureAwait(false);
                }
            }
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, _operation);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Waits for a call in flight, cancels an unfinished <c>COPY</c>, rolls back what was not committed and gives the connection back.</summary>
    public async ValueTask DisposeAsync()
    {
        await _gate.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            if (_copy is { } copy)
            {
                _copy = null;
                await QuietlyAsync(copy.DisposeAsync).ConfigureAwait(false); // an unfinished COPY is cancelled: the server aborts it
            }

            if (_transaction is { } transaction)
            {
                _transaction = null;
                await QuietlyAsync(() => new ValueTask(transaction.RollbackAsync(CancellationToken.None))).ConfigureAwait(false);
                await transaction.DisposeAsync().ConfigureAwait(false);
            }

            if (_connection is { } connection)
            {
                _connection = null;
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }
        finally
        {
            _gate.Release();
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

    private static async ValueTask WriteNullableAsync(NpgsqlBinaryImporter copy, long? value)
    {
        if (value is { } known)
        {
            await copy.WriteAsync(known, NpgsqlDbType.Bigint, CancellationToken.None).ConfigureAwait(false);
        }
        else
        {
            await copy.WriteNullAsync(CancellationToken.None).ConfigureAwait(false);
        }
    }

    private static async ValueTask QuietlyAsync(Func<ValueTask> work)
    {
        try
        {
            await work().ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e) || e is InvalidOperationException)
        {
            // The server ends an aborted transaction itself; a broken connection is closed by the pool.
        }
    }

    /// <summary>The hash's bytes in the reused buffer, for one write (the importer copies them before the write completes).</summary>
    private ArraySegment<byte> Hash(in BlockHash hash)
    {
        hash.Bytes.CopyTo(_hash);
        return new ArraySegment<byte>(_hash, 0, hash.Length);
    }

    private async ValueTask EnterAsync()
    {
        await _gate.WaitAsync().ConfigureAwait(false);
        if (_disposed)
        {
            _gate.Release();
            throw new ObjectDisposedException(nameof(PgImportTarget), "The import was disposed; this call did not run.");
        }
    }

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
}
