using BlockDb.Import;
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
/// is stored once, and both see its one ID. A merge the server aborts as a deadlock's victim (40P01: a session's batch held
/// blocks of the merge while waiting for others it had inserted) is taken back to a savepoint and run again.
/// </remarks>
internal sealed partial class PgImportTarget : IImportTarget
{
    private const int CancellationStride = 256;

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
    public async ValueTask<int> AddBlocksAsync(ReadOnlyMemory<BlockKey> blocks, long? volumeId, CancellationToken cancellationToken)
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
                ? await MergeAsync(_connection!, _transaction!, MergeBlocksAsync).ConfigureAwait(false)
                : await MergeAsync(_connection!, _transaction!, MergeBlocksetsAsync).ConfigureAwait(false);
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
}
