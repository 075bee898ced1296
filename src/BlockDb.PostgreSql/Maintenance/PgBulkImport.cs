using Npgsql;
using NpgsqlTypes;

namespace BlockDb.PostgreSql.Maintenance;

/// <summary>
/// Bulk import of blocks (a rebuild of the index from a backup's remote index files): the blocks stream into a
/// temporary table by binary <c>COPY</c> (<see href="https://www.postgresql.org/docs/current/sql-copy.html"/>), then one
/// <c>INSERT ... SELECT ... ORDER BY ... ON CONFLICT DO NOTHING</c> moves the new ones into <c>Block</c> in index order,
/// all in one transaction: everything or nothing.
/// </summary>
internal static class PgBulkImport
{
    private const int CancellationStride = 4096;

    private const string CreateStaging = """CREATE TEMP TABLE "BlockImport" ("Hash" bytea NOT NULL, "Size" bigint NOT NULL) ON COMMIT DROP""";

    private const string Copy = """COPY "BlockImport" ("Hash", "Size") FROM STDIN (FORMAT BINARY)""";

    private const string Merge = """INSERT INTO "Block" ("Hash", "Size") SELECT "Hash", "Size" FROM "BlockImport" ORDER BY "Hash", "Size" ON CONFLICT DO NOTHING""";

    public static async Task<long> RunAsync(PgContext context, IEnumerable<BlockKey> blocks, CancellationToken cancellationToken)
    {
        var connection = await context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        await using var connectionScope = connection.ConfigureAwait(false);
        var transaction = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
        await using var transactionScope = transaction.ConfigureAwait(false);
        using (var staging = new NpgsqlCommand(CreateStaging, connection, transaction))
        {
            await staging.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }

        var importer = await connection.BeginBinaryImportAsync(Copy, cancellationToken).ConfigureAwait(false);
        await using (importer.ConfigureAwait(false))
        {
            var count = 0;
            foreach (var block in blocks)
            {
                if (++count % CancellationStride == 0)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                }

                if (!BlockHash.IsValid(block.Hash) || block.Size < 1)
                {
                    // Disposing the importer without completing it cancels the COPY; the transaction rolls back.
                    throw new ArgumentException($"Block {count - 1} of the import is invalid: hash '{block.Hash}', size {block.Size}; nothing was imported.", nameof(blocks));
                }

                await importer.StartRowAsync(cancellationToken).ConfigureAwait(false);
                await importer.WriteAsync(Convert.FromBase64String(block.Hash), NpgsqlDbType.Bytea, cancellationToken).ConfigureAwait(false);
                await importer.WriteAsync(block.Size, NpgsqlDbType.Bigint, cancellationToken).ConfigureAwait(false);
            }

            await importer.CompleteAsync(cancellationToken).ConfigureAwait(false);
        }

        long inserted;
        using (var merge = new NpgsqlCommand(Merge, connection, transaction))
        {
            inserted = await merge.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }

        await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
        return inserted;
    }
}
